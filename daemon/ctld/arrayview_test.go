package ctld

import (
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestQstatListsUnstartedSubjobs checks qstat -t lists every subjob of an
// array, the ones that never started included (state Q), and that the
// array's record counts its subjobs by state.
func TestQstatListsUnstartedSubjobs(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	arr := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Stdout: "/tmp/out.^array_index^", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, ArrayIndices: indices("0-4"), ArrayMax: 2}})
	first, second := n.expect(api.MsgStart).Start, n.expect(api.MsgStart).Start
	if first.Job.Stdout != "/tmp/out.0" || second.Job.Stdout != "/tmp/out.1" {
		t.Errorf("subjob outputs %q, %q", first.Job.Stdout, second.Job.Stdout)
	}
	n.report(first.Job.ID, first.Run, "running", 0)
	n.report(first.Job.ID, first.Run, "exited", 0)
	n.expect(api.MsgRemove)
	third := n.expect(api.MsgStart).Start // [2] takes [0]'s place under %2
	tc.waitState(first.Job.ID, api.StateFinished)

	type row struct {
		id    string
		state api.State
	}
	for _, f := range []api.StatFilter{{IDs: []string{arr}, Subjobs: true, Finished: true}, {Subjobs: true, Finished: true}} {
		resp := tc.call(api.Request{Op: api.OpStat, Stat: &f})
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		var got []row
		for _, j := range resp.Jobs {
			got = append(got, row{j.ID, j.State})
			if j.ID == "1[4].t" && (j.ArrayParent != arr || j.ArrayIndex != 4 || j.Stdout != "/tmp/out.4" || j.Reason != "ArrayTaskLimit") {
				t.Errorf("unstarted subjob %+v", j)
			}
		}
		want := []row{{arr, api.StateArray}, {"1[0].t", api.StateFinished}, {second.Job.ID, api.StateRunning},
			{third.Job.ID, api.StateRunning}, {"1[3].t", api.StateQueued}, {"1[4].t", api.StateQueued}}
		if len(got) != len(want) {
			t.Fatalf("filter %+v: rows %v, want %v", f, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("filter %+v: row %d = %v, want %v", f, i, got[i], want[i])
			}
		}
		if st := resp.Jobs[0].ArrayStates; st == nil || *st != (api.ArrayStates{Queued: 2, Running: 2, Expired: 1}) {
			t.Errorf("array states %+v", st)
		}
	}
	// Without -t the array is one row, still with its counts.
	resp := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{}})
	if len(resp.Jobs) != 1 || resp.Jobs[0].ID != arr || resp.Jobs[0].ArrayStates == nil {
		t.Fatalf("qstat without -t: %+v", resp.Jobs)
	}
}
