package cli

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// topoConfigText is a controller's configuration with a topology: racks
// r1 (gpu01, gpu02) and r2 (gpu03, gpu04) in block b1.
const topoConfigText = `[cluster]
name = "lab"

[[partition]]
name = "a100"
nodes = "gpu[01-04]"
topology = "fab"

[[node]]
names = "gpu[01-04]"
gpus = 8

[[share]]
name = "vision"
partition = "a100"
users = ["*"]

[[topology]]
name = "fab"
levels = ["block", "rack"]

[[domain]]
level = "block"
name = "b1"
nodes = "gpu[01-04]"

[[domain]]
level = "rack"
name = "r[1-2]"
nodes = "gpu[01-04]"
`

// TestSharqctlShowTopology: each domain with its nodes up and its GPUs
// used and free (a node that is not up has none free), as text and JSON.
func TestSharqctlShowTopology(t *testing.T) {
	nodes := append(sampleNodes(), api.NodeStatus{Name: "gpu04", Partition: "a100", State: "up", GPUs: 8})
	for _, asJSON := range []bool{false, true} {
		ts := newTestSys(t)
		ts.rec.reply = func(req api.Request) (*api.Response, error) {
			switch req.Op {
			case api.OpConfig:
				return &api.Response{V: 1, Text: topoConfigText}, nil
			case api.OpNodes:
				return &api.Response{V: 1, Nodes: nodes}, nil
			}
			t.Errorf("unexpected request %+v", req)
			return &api.Response{V: 1}, nil
		}
		args := []string{"sharqctl", "show", "topology"}
		if asJSON {
			args = append(args, "--json")
		}
		if code := Sharqctl(context.Background(), args, ts.Sys); code != 0 {
			t.Fatalf("exit %d: %s", code, ts.err)
		}
		if !asJSON {
			for _, want := range []string{
				"fab        a100       block    b1         gpu[01-04]          2    32     8    12",
				"fab        a100       rack     r1         gpu[01-02]          1    16     8     4",
				"fab        a100       rack     r2         gpu[03-04]          1    16     0     8",
			} {
				if !strings.Contains(ts.out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, ts.out)
				}
			}
			continue
		}
		var got []TopologyDomain
		if err := json.Unmarshal(ts.out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || !reflect.DeepEqual(got[2], TopologyDomain{Topology: "fab", Partitions: []string{"a100"}, Level: "rack", Domain: "r2", Nodes: "gpu[03-04]", NodesUp: 1, GPUs: 16, FreeGPUs: 8}) {
			t.Errorf("decoded %+v", got)
		}
	}
}

// TestQstatFullTopology: qstat -f shows the job's grouping in
// Resource_List.place and where it runs in topology_domains.
func TestQstatFullTopology(t *testing.T) {
	for _, tc := range []struct {
		r         api.Resources
		place     string
		domains   []string
		wantDomai string
	}{
		{api.Resources{Nodes: 2, Group: "rack"}, "scatter:group=rack", []string{"rack=r1"}, "rack=r1"},
		{api.Resources{Nodes: 2, Group: "rack", GroupWait: 30 * time.Minute, Exclusive: true}, "scatter:excl:group=rack@30m0s", []string{"rack=r1", "rack=r2"}, "rack=r1+rack=r2"},
		{api.Resources{Nodes: 1, Group: "block", GroupPreferred: true}, "free:prefer_group=block", nil, ""},
	} {
		j := &api.Job{ID: "7.lab", Resources: tc.r, Domains: tc.domains}
		got := map[string]string{}
		for _, a := range pbsJobAttrs(j, time.UTC) {
			got[a.key()] = a.value
		}
		if got["Resource_List.place"] != tc.place || got["topology_domains"] != tc.wantDomai {
			t.Errorf("%+v: place %q, topology_domains %q; want %q, %q", tc.r, got["Resource_List.place"], got["topology_domains"], tc.place, tc.wantDomai)
		}
	}
}
