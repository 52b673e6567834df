package sim

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// topoCluster is one partition of four 8-GPU nodes in two racks of two,
// one share owning them all.
func topoSimCluster() Cluster {
	return Cluster{
		Sched: sched.Config{
			Partitions: []sched.Partition{{Name: "p", PreemptionRetries: sched.Unlimited, NodeFailureRetries: sched.Unlimited, StartFailureRetries: sched.Unlimited, Topology: "t"}},
			Nodes: []sched.Node{{Name: "n1", Partition: "p", GPUs: 8}, {Name: "n2", Partition: "p", GPUs: 8},
				{Name: "n3", Partition: "p", GPUs: 8}, {Name: "n4", Partition: "p", GPUs: 8}},
			Shares: []sched.Share{{Name: "a", Partition: "p", GPUs: 32, Strategy: sched.Lend}},
			Topologies: []sched.Topology{{Name: "t", Levels: []string{"rack"}, Domains: []sched.Domain{
				{Level: "rack", Name: "r1", Nodes: []string{"n1", "n2"}}, {Level: "rack", Name: "r2", Nodes: []string{"n3", "n4"}}}}},
		},
	}
}

// topoTrace: a 1-GPU job takes n1 for long; then a 2-node job that needs
// whole nodes. Without topology it takes n2 and n3 (the first whole
// nodes: two racks); with group=rack it takes rack r2.
const topoTrace = "submit_s,job,share,priority,gpus,duration_s,nodes,group\n" +
	"0,small,a,1,1,1000,,\n" +
	"1,big,a,1,8,100,2,rack\n"

// TestTopologyRun: spans and the group's waits, with the topology and
// with it off.
func TestTopologyRun(t *testing.T) {
	jobs, err := DecodeTrace(strings.NewReader(topoTrace))
	if err != nil {
		t.Fatal(err)
	}
	if jobs[1].Group != "rack" {
		t.Fatalf("group %q", jobs[1].Group)
	}
	cl := topoSimCluster()
	vs := Variants(cl)
	if last := vs[len(vs)-1]; last.Name != VariantNoTopology || !last.Cluster.TopologyOff {
		t.Fatalf("the last variant is %q", last.Name)
	}
	res, err := Compare(context.Background(), []Variant{vs[0], vs[len(vs)-1]}, jobs, nil)
	if err != nil {
		t.Fatal(err)
	}
	on, off := res[0], res[1]
	if !on.Topology || on.Topo.MultiNode != 1 || on.Topo.OneDomain != 1 || !slices.Equal(on.Topo.Spans, []int{1}) || on.Topo.GroupStarted != 1 {
		t.Errorf("topology on: %+v", on.Topo)
	}
	if off.Topo.MultiNode != 1 || off.Topo.OneDomain != 0 || !slices.Equal(off.Topo.Spans, []int{2}) || len(off.Topo.GroupWaits) != 1 {
		t.Errorf("topology off: %+v", off.Topo)
	}
	var b bytes.Buffer
	if err := WriteCompare(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"multi-node in one domain", "100.0% (1)", "0.0% (1)", "domains/job p50/p95", "p95 wait group jobs"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := WriteReport(&b, on); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "topology: 1 multi-node jobs started, 100.0% in one domain, domains per job p50 1 p95 1") {
		t.Errorf("report:\n%s", b.String())
	}
}

// TestTopologyTraceColumn: the group column round-trips, bounded waits
// included, and a bad value or a level the topology lacks is refused.
func TestTopologyTraceColumn(t *testing.T) {
	jobs, err := DecodeTrace(strings.NewReader("submit_s,job,share,priority,gpus,duration_s,nodes,group\n0,x,a,1,8,10,2,rack@3600\n0,y,a,1,8,10,2,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if jobs[0].Group != "rack" || jobs[0].GroupWait != time.Hour || jobs[1].Group != "" {
		t.Fatalf("decoded %+v", jobs)
	}
	var b bytes.Buffer
	if err := EncodeTrace(&b, jobs); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeTrace(&b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		back[i].Line = jobs[i].Line
	}
	if !reflect.DeepEqual(back, jobs) {
		t.Errorf("round trip %+v, want %+v", back, jobs)
	}
	for _, bad := range []string{"rack@0", "rack@x", "@10", "ra\x01ck"} {
		if _, err := DecodeTrace(strings.NewReader("submit_s,job,share,priority,gpus,duration_s,group\n0,x,a,1,8,10," + bad + "\n")); err == nil {
			t.Errorf("group %q accepted", bad)
		}
	}
	cl := topoSimCluster()
	jobs[1].Group = "switch"
	if err := ValidateTrace(&cl, jobs); err == nil || !strings.Contains(err.Error(), `group "switch"`) {
		t.Errorf("ValidateTrace: %v", err)
	}
	SetGroup(jobs, "rack", 0)
	if jobs[1].Group != "switch" {
		t.Error("SetGroup replaced a row's group")
	}
}

// TestITPRacksIsITP: contrib/examples/itp-racks.toml is itp.toml with
// its 160 nodes in 20 racks of 8.
func TestITPRacksIsITP(t *testing.T) {
	orig, err := LoadCluster("../contrib/examples/itp.toml")
	if err != nil {
		t.Fatal(err)
	}
	racks, err := LoadCluster("../contrib/examples/itp-racks.toml")
	if err != nil {
		t.Fatal(err)
	}
	topo := racks.Sched.Topologies
	if len(topo) != 1 || len(topo[0].Domains) != 20 || len(topo[0].Domains[19].Nodes) != 8 || topo[0].Domains[19].Nodes[7] != "itp160" {
		t.Fatalf("topology %+v", topo)
	}
	racks.Sched.Topologies = nil
	racks.Sched.Partitions[0].Topology = ""
	if !reflect.DeepEqual(racks, orig) {
		t.Error("itp-racks.toml differs from itp.toml beyond its topology")
	}
}

// TestPickVariants: --variants keeps the named variants in order, "as
// configured" first, and refuses unknown names.
func TestPickVariants(t *testing.T) {
	vs := Variants(topoSimCluster())
	got, err := pickVariants(vs, "topology off, as configured")
	if err != nil || len(got) != 2 || got[0].Name != VariantConfigured || got[1].Name != VariantNoTopology {
		t.Fatalf("pickVariants = %v, %v", got, err)
	}
	for _, bad := range []string{"topology off", "as configured,nosuch", ""} {
		if _, err := pickVariants(vs, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
