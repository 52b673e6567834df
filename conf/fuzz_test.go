package conf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is Problems
// naming the file, and that a configuration it accepts is consistent.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.toml")
	examples, _ := filepath.Glob("../contrib/examples/*.toml")
	for _, name := range append(files, examples...) {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.toml", data)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty Problems", err, err)
			}
			for _, p := range ps {
				if p.File != "fuzz.toml" || p.Msg == "" || p.Line < 0 || p.Col < 0 {
					t.Fatalf("bad problem %#v", p)
				}
			}
			return
		}
		if c.Cluster.Name == "" || len(c.Partitions) == 0 || len(c.Shares) == 0 {
			t.Fatalf("accepted a config without name, partitions or shares: %+v", c)
		}
		for _, n := range c.Nodes {
			if c.Partition(n.Partition) == nil {
				t.Fatalf("node %s has unknown partition %q", n.Name, n.Partition)
			}
			if len(n.GPUDevices) != n.GPUs {
				t.Fatalf("node %s: %d devices for %d GPUs", n.Name, len(n.GPUDevices), n.GPUs)
			}
		}
		for _, s := range c.Shares {
			if c.Partition(s.Partition) == nil {
				t.Fatalf("share %s has unknown partition %q", s.Name, s.Partition)
			}
			if s.GPUs > c.PartitionGPUs(s.Partition) {
				t.Fatalf("share %s guarantees %d GPUs of %d", s.Name, s.GPUs, c.PartitionGPUs(s.Partition))
			}
		}
	})
}
