package conf

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/policy"
)

// The shipped examples must load cleanly.
func TestExamplesLoad(t *testing.T) {
	files, err := filepath.Glob("../contrib/examples/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d example files, want cluster.toml and local.toml", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if _, err := Load(f); err != nil {
				t.Fatalf("Load(%s):\n%v", f, err)
			}
		})
	}
}

func TestExampleCluster(t *testing.T) {
	c, err := Load("../contrib/examples/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.Name != "lab" || c.Cluster.Controller != "ctl01:6820" || !c.Cluster.TLS() {
		t.Errorf("cluster = %+v", c.Cluster)
	}
	if c.Cluster.History != 7*24*time.Hour {
		t.Errorf("history = %v, want 168h", c.Cluster.History)
	}
	if len(c.Nodes) != 18 {
		t.Errorf("%d nodes, want 18", len(c.Nodes))
	}
	if n := c.Node("gpu16"); n == nil || n.Partition != "gpu" || n.GPUs != 8 || n.MemBytes != 1<<40 ||
		len(n.GPUDevices) != 8 || n.GPUDevices[7] != "/dev/nvidia7" {
		t.Errorf("gpu16 = %+v", n)
	}
	if n := c.Node("dbg2"); n == nil || n.Partition != "debug" || n.GPUDevices[1] != "/dev/nvidia1" || len(n.ExtraDevices) != 3 {
		t.Errorf("dbg2 = %+v", n)
	}
	if !c.Scheduler.Backfill {
		t.Error("the example turns backfill off")
	}
	if p, d := c.Partition("gpu"), c.Partition("debug"); p.DefaultWalltime != 4*time.Hour || d.DefaultWalltime != d.MaxWalltime {
		t.Errorf("default walltimes %v and %v, want 4h and debug's max_walltime", p.DefaultWalltime, d.DefaultWalltime)
	}
	if got := c.PartitionGPUs("gpu"); got != 128 {
		t.Errorf("PartitionGPUs(gpu) = %d, want 128", got)
	}
	s := c.Share("nlp")
	if s == nil || s.Strategy != policy.Lend || s.BorrowLimit != policy.Unlimited || s.PriorityDefault != DefaultPriority || !s.Enabled {
		t.Errorf("nlp = %+v", s)
	}
}

func TestExampleLocal(t *testing.T) {
	c, err := Load("../contrib/examples/local.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.Controller != "127.0.0.1:6820" {
		t.Errorf("controller = %q", c.Cluster.Controller)
	}
	n := c.Node("node1")
	if n == nil || n.GPUs != 8 || len(n.GPUDevices) != 8 || n.GPUDevices[0] != "/run/sharq-local/dev/gpu0" ||
		n.GPUDevices[7] != "/run/sharq-local/dev/gpu7" || len(n.ExtraDevices) != 0 || n.ExtraDevices == nil {
		t.Errorf("node1 = %+v", n)
	}
	var quota int
	for _, s := range c.Shares {
		quota += s.GPUs
	}
	if quota != 8 || len(c.Shares) != 3 {
		t.Errorf("%d shares with %d GPUs, want 3 with 8", len(c.Shares), quota)
	}
	if s := c.Share("infra"); s == nil || s.Strategy != policy.Reserve || !slices.Contains(s.Users, "*") {
		t.Errorf("infra = %+v", s)
	}
}

func BenchmarkParseExample(b *testing.B) {
	data, err := os.ReadFile("../contrib/examples/cluster.toml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("cluster.toml", data); err != nil {
			b.Fatal(err)
		}
	}
}
