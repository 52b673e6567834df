package ctld

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// A node that lacks a configured mount says so in its hello: it stays
// down, with the problem shown, and gets no job; another node without the
// problem runs the job.
func TestNodeMissingMountStaysDown(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	n1 := tc.attachNodeWith("n1", &api.Inventory{Source: "config", CPUs: 8, Missing: []string{"mount /scratch: no such file or directory"}})
	n2 := tc.attachNode("n2")
	id := tc.submit("a", 1, nil)
	if st := n2.expect(api.MsgStart).Start; st.Job.ID != id {
		t.Fatalf("started %s on n2, want %s", st.Job.ID, id)
	}
	n1.quiet(200 * time.Millisecond)
	nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes
	if nodes[0].Name != "n1" || nodes[0].State != "down" || !strings.Contains(strings.Join(nodes[0].Problems, ";"), "mount /scratch") {
		t.Fatalf("n1: %+v", nodes[0])
	}
	if nodes[1].State != "up" {
		t.Fatalf("n2: %+v", nodes[1])
	}
}

// image "host" is refused at submit where the partition does not allow it.
func TestSubmitHostImageRefused(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	var e *api.Error
	spec := &api.SubmitSpec{Job: api.JobSpec{Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Image: "host"}}
	if err := tc.ctl.do(context.Background(), func() { _, e = tc.ctl.submit(Identity{UID: 1000, GID: 1000, User: "alice"}, spec) }); err != nil {
		t.Fatal(err)
	}
	if e == nil || e.Code != api.CodeBadRequest || !strings.Contains(e.Message, `image "host"`) || !strings.Contains(e.Message, "host_image") {
		t.Fatalf("submit with image host: %v", e)
	}
	if jobs := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{}}).Jobs; len(jobs) != 0 {
		t.Fatalf("a job was queued: %+v", jobs)
	}
}

// Nodes of a partition whose checkpoint_root is meant to be shared but
// that see different marker files are reported; a partition whose
// checkpoints are local by choice is not.
func TestCheckpointRootNotShared(t *testing.T) {
	for _, tc := range []struct {
		name  string
		local bool
	}{{"shared", false}, {"local", true}} {
		t.Run(tc.name, func(t *testing.T) {
			tc2 := newTestCluster(t, []string{"n1:8", "n2:8", "n3:8"}, twoShares)
			if tc.local {
				cfg := *tc2.ctl.cfg
				parts := slices.Clone(cfg.Partitions)
				parts[0].CheckpointsLocal = true
				cfg.Partitions = parts
				tc2.ctl.do(context.Background(), func() { tc2.ctl.cfg = &cfg })
			}
			for name, marker := range map[string]string{"n1": "aaa", "n2": "aaa", "n3": "bbb"} {
				tc2.attachNodeWith(name, &api.Inventory{Source: "config", CPUs: 8,
					Checkpoint: &api.CheckpointFS{Root: "/ckpt", Type: "ext4", Marker: marker}})
			}
			nodes := tc2.call(api.Request{Op: api.OpNodes}).Nodes
			for _, n := range nodes {
				probs := strings.Join(n.Problems, "; ")
				reported := strings.Contains(probs, "not shared across partition gpu")
				if reported == tc.local {
					t.Errorf("%s: problems %q", n.Name, probs)
				}
				if !tc.local && n.Name == "n3" && !strings.Contains(probs, "n[1-2] see another directory") {
					t.Errorf("n3: %q does not name the others", probs)
				}
			}
		})
	}
}
