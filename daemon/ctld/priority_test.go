package ctld

import (
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestPBSPriorityIsOrder checks that qsub -p and qalter -p set PBS's job
// priority in the user's own numbers, any user may use PBS's whole range,
// and the sharq priority (the right to preempt) stays the share's default
// unless an admin changes it; refusals name the user's numbers.
func TestPBSPriorityIsOrder(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	user := Identity{UID: 1000, GID: 1000, User: "alice"}
	root := Identity{UID: 0, User: "root"}
	id := tc.submit("a", 1, nil)
	tests := []struct {
		name      string
		who       Identity
		alter     api.AlterSpec
		wantPBS   int
		wantSharq int
		wantErr   string
	}{
		{"user raises PBS priority", user, api.AlterSpec{PBSPriority: ptr(1023)}, 1023, 100, ""},
		{"user lowers it", user, api.AlterSpec{PBSPriority: ptr(-1024)}, -1024, 100, ""},
		{"user sets 1", user, api.AlterSpec{PBSPriority: ptr(1)}, 1, 100, ""},
		{"outside PBS's range, in the user's numbers", user, api.AlterSpec{PBSPriority: ptr(1024)}, 1, 100, "Priority 1024 is outside PBS's -1024..1023"},
		{"user may not raise sharq priority", user, api.AlterSpec{Priority: ptr(150)}, 1, 100, `sharq priority 150 is above share "a"'s priority_default 100`},
		{"admin raises sharq priority", root, api.AlterSpec{Priority: ptr(150)}, 1, 150, ""},
		{"PBS priority leaves sharq's alone", user, api.AlterSpec{PBSPriority: ptr(-5)}, -5, 150, ""},
		{"user lowers sharq priority", user, api.AlterSpec{Priority: ptr(40)}, -5, 40, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.alter
			a.ID = id
			resp := callAs(tc.ctl, tt.who, api.Request{Op: api.OpAlter, Alter: &a})
			switch {
			case tt.wantErr == "" && resp.Error != nil:
				t.Fatalf("refused: %v", resp.Error)
			case tt.wantErr != "" && (resp.Error == nil || !strings.Contains(resp.Error.Message, tt.wantErr)):
				t.Fatalf("error %v, want %q", resp.Error, tt.wantErr)
			}
			if j := tc.job(id); j.PBSPriority != tt.wantPBS || j.Priority != tt.wantSharq {
				t.Errorf("PBS priority %d, sharq priority %d; want %d, %d", j.PBSPriority, j.Priority, tt.wantPBS, tt.wantSharq)
			}
		})
	}
}

// TestSubmitNeverRuns checks that a job no node or share could ever run is
// refused at submit with PBS's words (and PBS's error, which qsub turns
// into PBS's exit status), not held; one that fits is taken.
func TestSubmitNeverRuns(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	tests := []struct {
		name    string
		share   string
		r       api.Resources
		wantErr string
	}{
		{"more GPUs than any node", "b", api.Resources{Nodes: 1, GPUsPerNode: 99},
			"Job violates queue and/or server resource limits (select=1:ngpus=99: partition gpu has no node that large)"},
		{"more nodes than the partition", "b", api.Resources{Nodes: 3, GPUsPerNode: 1},
			"Job violates queue and/or server resource limits (select=3:ngpus=1: partition gpu has no 3 nodes that large)"},
		{"more than a lending share holds", "a", api.Resources{Nodes: 1, GPUsPerNode: 8},
			"Job violates queue and/or server resource limits (8 GPUs: more than share a can ever hold (its quota and what it may borrow))"},
		{"a borrowing share reaches the partition", "b", api.Resources{Nodes: 2, GPUsPerNode: 6}, ""},
		{"fits its quota", "a", api.Resources{Nodes: 1, GPUsPerNode: 4}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, e := tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: tt.share, Command: []string{"true"}, WorkDir: "/tmp", Resources: tt.r}})
			if tt.wantErr == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				if tc.job(id).State == api.StateHeld {
					t.Errorf("%s is held", id)
				}
				return
			}
			if e == nil || e.Code != api.CodeResourceLimit || e.Message != tt.wantErr {
				t.Fatalf("error %+v, want %s %q", e, api.CodeResourceLimit, tt.wantErr)
			}
		})
	}
}
