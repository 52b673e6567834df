package ctld

import (
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

// TestOtherUsersJobsUntouchable: another user deletes, holds, releases,
// alters or opens a session in none of alice's jobs, by any form of id (the
// short and the full id, an array, a running subjob, a subjob not started
// yet, ranges and lists of subjobs), and a dependency on her job changes
// nothing of it. After every refusal alice's jobs are as they were.
func TestOtherUsersJobsUntouchable(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	job := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "held", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, Hold: "u"}})
	arr := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, ArrayIndices: indices("0-9")}})
	for range 4 { // share a holds 4 GPUs: subjobs 0-3 start, 4-9 wait
		n.expect(api.MsgStart)
	}
	seq := strings.TrimSuffix(arr, "[].t")
	short := strings.TrimSuffix(job, ".t")
	before := map[string]api.Job{}
	watch := []string{job, arr, seq + "[0].t", seq + "[3].t"}
	for _, id := range watch {
		before[id] = tc.job(id)
	}
	ids := []string{job, short, arr, seq + "[]", seq + "[0]", seq + "[0].t", seq + "[9]", seq + "[0-3]", seq + "[1,8,9]", seq + "[0-9:2]"}
	for _, id := range ids {
		for _, op := range []api.Op{api.OpDelete, api.OpHold, api.OpRelease} {
			t.Run(string(op)+" "+id, func(t *testing.T) {
				resp := callAs(tc.ctl, mallory, api.Request{Op: op, IDs: []string{id}})
				if !refused(resp.Error) {
					t.Fatalf("answer %+v, want a refusal", resp.Error)
				}
			})
		}
		low, name := 0, "x"
		for what, a := range map[string]*api.AlterSpec{
			"priority": {ID: id, Priority: &low}, "name": {ID: id, Name: &name}, "deps": {ID: id, Deps: &[]api.Dep{{Type: jobid.AfterOK, On: job}}},
		} {
			t.Run("alter "+what+" "+id, func(t *testing.T) {
				resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpAlter, Alter: a})
				if resp.Error == nil || (!refused(resp.Error) && !strings.Contains(resp.Error.Message, "not a range")) {
					t.Fatalf("answer %+v, want a refusal", resp.Error)
				}
			})
		}
		t.Run("session "+id, func(t *testing.T) {
			resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpSession, Session: &api.SessionSpec{Job: id}})
			if resp.Error == nil || resp.Session != nil {
				t.Fatalf("answer %+v %+v, want a refusal", resp.Error, resp.Session)
			}
		})
	}
	// (A subjob not started yet is no job to qhold, qrls or qalter, for its
	// owner too: Unknown Job Id, as PBS answers.)

	// PBS lets a job depend on another user's: it may wait for hers, and
	// that changes nothing of hers.
	dep := callAs(tc.ctl, mallory, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Name: "after", Share: "a",
		Command: []string{"true"}, WorkDir: "/tmp", Deps: []api.Dep{{Type: jobid.AfterOK, On: job}, {Type: jobid.AfterAny, On: arr}}}}})
	if dep.Error != nil {
		t.Fatalf("a dependency on another user's jobs: %v", dep.Error)
	}
	for _, id := range watch {
		got := tc.job(id)
		b := before[id]
		if got.State != b.State || got.Hold != b.Hold || got.Priority != b.Priority || got.Name != b.Name ||
			len(got.Deps) != len(b.Deps) || len(got.History) != len(b.History) {
			t.Errorf("%s changed: %+v\nwas %+v", id, got, b)
		}
	}
	select {
	case m := <-n.msgs:
		t.Fatalf("the refused requests sent the node %+v", m)
	default:
	}
}

// refused: permission denied, or (a subjob not started yet, which only
// qdel takes) an unknown job, the owner's answer too.
func refused(e *api.Error) bool {
	return e != nil && (e.Code == api.CodePermission || e.Code == api.CodeUnknownJob)
}
