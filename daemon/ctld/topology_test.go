package ctld

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// topoShares is twoShares with a topology: racks r1 (n1 n2) and r2 (n3
// n4) of 8-GPU nodes.
const topoShares = twoShares + `
[[topology]]
name = "fab"
levels = ["rack"]

[[domain]]
level = "rack"
name = "r[1-2]"
nodes = "n[1-4]"
`

// newTopoCluster is a test cluster whose partition sits in topoShares'
// topology (withTopology false: none named).
func newTopoCluster(t *testing.T, withTopology bool) *testCluster {
	t.Helper()
	nodes := []string{"n1:8", "n2:8", "n3:8", "n4:8"}
	tc := prepareTestCluster(t, nodes, topoShares, "", Limits{})
	if withTopology {
		text, err := os.ReadFile(tc.conf)
		if err != nil {
			t.Fatal(err)
		}
		text = []byte(strings.Replace(string(text), "max_walltime = \"1h\"\n", "max_walltime = \"1h\"\ntopology = \"fab\"\n", 1))
		if err := os.WriteFile(tc.conf, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tc.start()
	t.Cleanup(tc.stop)
	return tc
}

// TestSubmitTopologyChecks: a request for a level the partition's
// topology lacks, or for one no domain of is big enough, is refused at
// submission with what it asked for.
func TestSubmitTopologyChecks(t *testing.T) {
	with, without := newTopoCluster(t, true), newTopoCluster(t, false)
	tests := []struct {
		name string
		tc   *testCluster
		r    api.Resources
		code string
		msg  string
	}{
		{"no topology", without, api.Resources{Nodes: 2, GPUsPerNode: 1, Group: "rack"}, api.CodeBadRequest, "place=group=rack: partition gpu has no topology"},
		{"unknown level", with, api.Resources{Nodes: 2, GPUsPerNode: 1, Group: "switch"}, api.CodeBadRequest, "not a level of partition gpu's topology fab (levels: rack)"},
		{"no rack big enough", with, api.Resources{Nodes: 3, GPUsPerNode: 1, Group: "rack"}, api.CodeResourceLimit, "place=group=rack, select=3:ngpus=1: no rack of partition gpu has 3 nodes that large"},
		{"wait without level", with, api.Resources{Nodes: 1, GroupWait: 5}, api.CodeBadRequest, "needs a level"},
		{"preferred with a wait", with, api.Resources{Nodes: 1, Group: "rack", GroupPreferred: true, GroupWait: 5}, api.CodeBadRequest, "takes no wait"},
		{"level too long", with, api.Resources{Nodes: 1, Group: strings.Repeat("r", 64)}, api.CodeBadRequest, "at most 63"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := tt.tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Resources: tt.r}})
			if e == nil || e.Code != tt.code || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("refusal %+v, want %s with %q", e, tt.code, tt.msg)
			}
		})
	}
	// A bounded or preferred request for 3 nodes is taken: it may span
	// racks later.
	for _, r := range []api.Resources{{Nodes: 3, GPUsPerNode: 1, Group: "rack", GroupWait: 60e9}, {Nodes: 3, GPUsPerNode: 1, Group: "rack", GroupPreferred: true}} {
		if _, e := with.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Resources: r}}); e != nil {
			t.Errorf("%+v refused: %v", r, e)
		}
	}
}

// TestTopologyStartAndQstat: a rack job starts on the nodes of one rack
// (the other has a node busy), and qstat -f says which.
func TestTopologyStartAndQstat(t *testing.T) {
	tc := newTopoCluster(t, true)
	nodes := map[string]*scriptedNode{}
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		nodes[n] = tc.attachNode(n)
	}
	small := tc.submit("a", 1, nil)
	if st := nodes["n1"].expect(api.MsgStart).Start; st.Job.ID != small {
		t.Fatalf("n1 started %s, want %s", st.Job.ID, small)
	}
	big := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "big", Share: "b", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 2, GPUsPerNode: 8, Group: "rack"}}})
	nodes["n3"].expect(api.MsgStart)
	nodes["n4"].expect(api.MsgStart)
	j := tc.job(big)
	var on []string
	for _, a := range j.Allocs {
		on = append(on, a.Node)
	}
	if !slices.Equal(on, []string{"n3", "n4"}) || !slices.Equal(j.Domains, []string{"rack=r2"}) {
		t.Fatalf("running on %v in %v, want n3 n4 in rack=r2", on, j.Domains)
	}
}

// TestNVLinkFromInventory: the NVLink peers a node's NVML reports decide
// which GPUs a 2-GPU job gets (peers 0 and 2, not the adjacent 0 and 1).
func TestNVLinkFromInventory(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	inv := &api.Inventory{Source: "nvml", CPUs: 8}
	for i, topo := range []string{"nvlink gpu2x2", "nvlink gpu3x2", "nvlink gpu0x2", "nvlink gpu1x2 switchx4", "", "", "", ""} {
		inv.GPUs = append(inv.GPUs, api.GPU{Index: i, Device: fmt.Sprintf("/dev/nvidia%d", i), Topology: topo})
	}
	n := tc.attachNodeWith("n1", inv)
	id := tc.submit("a", 2, nil)
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != id || !slices.Equal(st.GPUs, []int{0, 2}) {
		t.Fatalf("started %s on GPUs %v, want %s on [0 2]", st.Job.ID, st.GPUs, id)
	}
}

// TestNVLinkPeersParse: what the controller reads of an inventory.
func TestNVLinkPeersParse(t *testing.T) {
	inv := &api.Inventory{Source: "nvml", GPUs: []api.GPU{
		{Index: 0, Topology: "nvlink gpu1x2 gpu9x1 switchx6"}, {Index: 1, Topology: "nvlink gpu0x2"}, {Index: 7, Topology: "nvlink gpu0x1"},
	}}
	if got, want := nvlinkPeers(inv, 2), [][]int{{1}, {0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("peers %v, want %v", got, want)
	}
	inv.Source = "config"
	if got := nvlinkPeers(inv, 2); got != nil {
		t.Errorf("a configured inventory: %v", got)
	}
}
