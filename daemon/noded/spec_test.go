package noded

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestNodeFileContent(t *testing.T) {
	tests := []struct {
		name     string
		nodes    []string
		mpiprocs int
		want     string
	}{
		{"one line per node", []string{"n1", "n2"}, 0, "n1\nn2\n"},
		{"one rank", []string{"n1"}, 1, "n1\n"},
		{"ranks repeat each node", []string{"n1", "n2"}, 3, "n1\nn1\nn1\nn2\nn2\nn2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(nodeFileContent(tt.nodes, tt.mpiprocs)); got != tt.want {
				t.Errorf("node file %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkPrepareSpec measures what sharqd does on the disk before each
// container start: the job's node directory, script, node file and
// checkpoint directory, then its record (store.save).
func BenchmarkPrepareSpec(b *testing.B) {
	dir := b.TempDir()
	st := store{dir: dir}
	inv := []api.GPU{{Index: 0, Device: "/dev/null"}}
	i := 0
	for b.Loop() {
		i++
		o := &api.StartOrder{Image: "img", GPUs: []int{0}, Job: api.RunSpec{
			ID: fmt.Sprintf("%d.bench", i), WorkDir: "/w", Stdout: "/w/o", Stderr: "/w/o",
			Owner: api.Owner{UID: 1000, GID: 1000}, Script: "#!/bin/sh\ntrue\n",
		}}
		if _, err := prepareSpec(o, specInput{Node: "n1", GPUs: inv, JobDir: st.jobDir(o.Job.ID), CheckpointRoot: filepath.Join(dir, "ckpt")}); err != nil {
			b.Fatal(err)
		}
		if err := st.save(&jobRecord{JobID: o.Job.ID, Started: time.Now()}); err != nil {
			b.Fatal(err)
		}
	}
}
