package ctld

import (
	"os"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestResourceDefaults (N5): a job that names no ncpus or mem gets the
// partition's defaults at submit (default_ncpus, default_mem_per_gpu,
// default_mem_per_cpu), else its share of the node it starts on; the
// start order carries them (the node enforces them in the job's cgroup,
// and bounds /dev/shm by the memory), and qstat -f shows them. What a job
// names is kept.
func TestResourceDefaults(t *testing.T) {
	const gib = int64(1) << 30
	inv := &api.Inventory{Source: "config", CPUs: 64, MemBytes: 512 * gib}
	tests := []struct {
		name         string
		partition    string // keys added to the partition
		res          api.Resources
		wantCPUs     int
		wantMem      int64
		wantDefaults bool // a history line says the node's share was taken
	}{
		{"node share of one GPU", "", api.Resources{GPUsPerNode: 1}, 8, 64 * gib, true},
		{"node share of three GPUs rounds up", "", api.Resources{GPUsPerNode: 3}, 24, 192 * gib, true},
		{"no GPU: one CPU and its memory", "", api.Resources{}, 1, 8 * gib, true},
		{"exclusive: the whole node", "", api.Resources{GPUsPerNode: 1, Exclusive: true}, 64, 512 * gib, true},
		{"named values kept", "", api.Resources{GPUsPerNode: 1, CPUsPerNode: 2, MemPerNode: gib}, 2, gib, false},
		{"named ncpus, memory its share", "", api.Resources{GPUsPerNode: 2, CPUsPerNode: 3}, 3, 128 * gib, true},
		{"partition defaults per GPU", "default_ncpus = 6\ndefault_mem_per_gpu = \"10gb\"\n", api.Resources{GPUsPerNode: 2}, 6, 20 * gib, false},
		{"partition default per CPU", "default_ncpus = 4\ndefault_mem_per_cpu = \"2gb\"\n", api.Resources{}, 4, 8 * gib, false},
		{"partition ncpus only", "default_ncpus = 4\n", api.Resources{GPUsPerNode: 4}, 4, 256 * gib, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := prepareTestCluster(t, []string{"n1:8"}, twoShares, "", Limits{})
			text, err := os.ReadFile(tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			text = []byte(strings.Replace(string(text), "max_walltime = \"1h\"\n", "max_walltime = \"1h\"\n"+tt.partition, 1))
			if err := os.WriteFile(tc.conf, text, 0o644); err != nil {
				t.Fatal(err)
			}
			tc.start()
			t.Cleanup(tc.stop)
			n := tc.attachNodeWith("n1", inv)
			res := tt.res
			res.Nodes = 1
			// An exclusive job is charged its whole node (8 GPUs): only
			// the borrowing share can ever hold that.
			share := "a"
			if res.Exclusive {
				share = "b"
			}
			id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: share, Command: []string{"true"}, WorkDir: "/tmp", Resources: res}})
			st := n.expect(api.MsgStart).Start
			if got := st.Job.Resources; got.CPUsPerNode != tt.wantCPUs || got.MemPerNode != tt.wantMem {
				t.Fatalf("start order: ncpus %d mem %d, want %d and %d", got.CPUsPerNode, got.MemPerNode, tt.wantCPUs, tt.wantMem)
			}
			j := tc.job(id)
			if j.Resources.CPUsPerNode != tt.wantCPUs || j.Resources.MemPerNode != tt.wantMem {
				t.Fatalf("qstat -f: ncpus %d mem %d, want %d and %d", j.Resources.CPUsPerNode, j.Resources.MemPerNode, tt.wantCPUs, tt.wantMem)
			}
			said := false
			for _, h := range j.History {
				said = said || strings.HasPrefix(h.What, "defaults per node:")
			}
			if said != tt.wantDefaults {
				t.Fatalf("history says the node's share was taken: %v, want %v (%+v)", said, tt.wantDefaults, j.History)
			}
		})
	}
}

func TestShareOf(t *testing.T) {
	for _, tc := range []struct {
		total       int64
		part, whole int
		want        int64
	}{
		{64, 1, 8, 8}, {64, 3, 8, 24}, {10, 1, 3, 4}, {10, 3, 3, 10}, {10, 5, 3, 10}, {10, 1, 0, 10},
		{1 << 62, 7, 8, 7 << 59}, {0, 1, 8, 0},
	} {
		if got := shareOf(tc.total, tc.part, tc.whole); got != tc.want {
			t.Errorf("shareOf(%d, %d, %d) = %d, want %d", tc.total, tc.part, tc.whole, got, tc.want)
		}
	}
	if got := mulCap(1<<50, 1<<20); got != maxDefaultMem {
		t.Errorf("mulCap overflow: %d", got)
	}
}
