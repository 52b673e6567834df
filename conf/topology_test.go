package conf

import (
	"slices"
	"strings"
	"testing"
)

// TestTopologyExample: the example's topology loads as written: one
// block, four racks of four nodes split from one hostlist, the gpu
// partition placed by it.
func TestTopologyExample(t *testing.T) {
	c, err := Load("../contrib/examples/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	top := c.PartitionTopology("gpu")
	if top == nil || top.Name != "fabric" || !slices.Equal(top.Levels, []string{"block", "rack"}) {
		t.Fatalf("gpu's topology = %+v", top)
	}
	if p := c.Partition("gpu"); p.DefaultTopologyLevel != "rack" {
		t.Errorf("default level %q", p.DefaultTopologyLevel)
	}
	if c.PartitionTopology("debug") != nil {
		t.Error("debug has a topology")
	}
	var got []string
	for _, d := range top.Domains {
		got = append(got, d.String()+"="+CompressHostlist(d.Nodes))
	}
	want := []string{"block nvl1=gpu[01-16]", "rack rack1=gpu[01-04]", "rack rack2=gpu[05-08]", "rack rack3=gpu[09-12]", "rack rack4=gpu[13-16]"}
	if !slices.Equal(got, want) {
		t.Errorf("domains %v, want %v", got, want)
	}
	if m := top.DomainOf("rack"); m["gpu07"] != "rack2" || len(m) != 16 {
		t.Errorf("DomainOf(rack) = %v", m)
	}
}

// TestTopologyWarnsLooseNodes: a partition's nodes in no domain of a
// level load, with a warning at the partition's topology key.
func TestTopologyWarnsLooseNodes(t *testing.T) {
	const doc = `[cluster]
name = "c"

[[partition]]
name = "gpu"
nodes = "g[1-3]"
topology = "t"

[[node]]
names = "g[1-3]"
gpus = 4

[[share]]
name = "s"
partition = "gpu"
users = ["*"]

[[topology]]
name = "t"
levels = ["leaf"]

[[domain]]
level = "leaf"
name = "l1"
nodes = "g[1-2]"
`
	c, err := Parse("t.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || c.Warnings[0].Line != 7 || !strings.Contains(c.Warnings[0].Msg, "g3 in no leaf") {
		t.Fatalf("warnings %v", c.Warnings)
	}
}

// TestNVLinkExample: the example's gpu nodes declare two NVLink groups.
func TestNVLinkExample(t *testing.T) {
	c, err := Load("../contrib/examples/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	n := c.Node("gpu03")
	if n == nil || len(n.NVLinkGroups) != 2 || !slices.Equal(n.NVLinkGroups[1], []int{4, 5, 6, 7}) {
		t.Fatalf("gpu03 = %+v", n)
	}
	if d := c.Node("dbg1"); d == nil || d.NVLinkGroups != nil {
		t.Fatalf("dbg1 = %+v", d)
	}
}
