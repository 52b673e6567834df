package ctld

import (
	"context"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// trySubmit submits spec as alice and returns the id or the refusal.
func (tc *testCluster) trySubmit(spec *api.SubmitSpec) (string, *api.Error) {
	tc.t.Helper()
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	var jobID string
	var e *api.Error
	if err := tc.ctl.do(context.Background(), func() { jobID, e = tc.ctl.submit(id, spec) }); err != nil {
		tc.t.Fatal(err)
	}
	return jobID, e
}

func TestSubmitPBSPriority(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	tests := []struct {
		name    string
		pbs     int
		wantErr string
	}{
		{"default", 0, ""},
		{"below", -1, ""},
		{"bottom", -1024, ""},
		{"above needs no admin", 1, ""},
		{"top", 1023, ""},
		{"out of range", 2000, "Priority 2000 is outside PBS's -1024..1023"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pbs
			id, e := tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp"}, PBSPriority: &p})
			if tt.wantErr != "" {
				if e == nil || e.Message != tt.wantErr {
					t.Fatalf("error %v, want %q", e, tt.wantErr)
				}
				return
			}
			if e != nil {
				t.Fatalf("refused: %v", e)
			}
			// The sharq priority, which decides in-share preemption, stays
			// the share's default.
			if got := tc.job(id); got.Priority != 100 || got.PBSPriority != tt.pbs {
				t.Errorf("sharq priority %d, PBS priority %d; want 100, %d", got.Priority, got.PBSPriority, tt.pbs)
			}
		})
	}
}

// TestSubmitNodeLabels checks the node labels a job selects: unknown
// labels and values no node has are refused with what there is, and a job
// runs only on nodes that carry its labels.
func TestSubmitNodeLabels(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:4:gpu_type=v100", "n2:4:gpu_type=a100,ib=hdr"}, twoShares)
	tests := []struct {
		name    string
		labels  map[string]string
		wantErr string
	}{
		{"unknown label", map[string]string{"gpu_typ": "a100"}, `unknown resource "gpu_typ": not a resource sharq knows (ngpus, ncpus, mem, walltime, mpiprocs, ompthreads, place) nor a label of partition gpu's nodes (labels: gpu_type, ib)`},
		{"value no node has", map[string]string{"gpu_type": "h100"}, "no node of partition gpu has gpu_type=h100 (its nodes have a100, v100)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
				Resources: api.Resources{Nodes: 1, GPUsPerNode: 1, Labels: tt.labels}}})
			if e == nil || e.Message != tt.wantErr {
				t.Fatalf("error %v, want %q", e, tt.wantErr)
			}
		})
	}
	n1, n2 := tc.attachNode("n1"), tc.attachNode("n2")
	id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1, MPIProcs: 2, Labels: map[string]string{"gpu_type": "a100"}}}})
	st := n2.expect(api.MsgStart).Start
	if st.Job.ID != id || st.Job.Resources.MPIProcs != 2 {
		t.Fatalf("start on n2: %+v", st.Job)
	}
	n1.quiet(100 * time.Millisecond)
	if got := tc.job(id).Resources.Labels; got["gpu_type"] != "a100" {
		t.Errorf("qstat shows labels %v", got)
	}
}

// TestSubmitExclusive: place=excl reaches the core through the controller:
// the exclusive job starts alone on an idle node, a later job that would fit
// beside it waits, and qstat shows it exclusive. Its share is charged the
// whole node (issue 30 item 1): b borrows a's idle quota for it, so b's
// next job has nothing left to borrow.
func TestSubmitExclusive(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n1 := tc.attachNode("n1")
	excl := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "x", Share: "b", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1, Exclusive: true}}})
	if st := n1.expect(api.MsgStart).Start; st.Job.ID != excl || len(st.GPUs) != 1 {
		t.Fatalf("start: %+v", st)
	}
	other := tc.submit("b", 1, nil)
	n1.quiet(200 * time.Millisecond)
	if j := tc.job(other); j.State != api.StateQueued || j.Reason != "QuotaExhausted" {
		t.Fatalf("job beside the exclusive one: state %s reason %q", j.State, j.Reason)
	}
	if j := tc.job(excl); !j.Resources.Exclusive {
		t.Fatalf("qstat lost place=excl: %+v", j.Resources)
	}
	n1.report(excl, 0, api.RunExited, 0)
	n1.expect(api.MsgRemove)
	if st := n1.expect(api.MsgStart).Start; st.Job.ID != other {
		t.Fatalf("after the exclusive job: start %+v", st)
	}
}
