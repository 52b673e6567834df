//go:build !unit

package ctld

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
	"github.com/sharq-hpc/sharq/spool"
)

// TestRestoreDependencyOrder: waiting jobs that depend on a waiting array,
// or (through qalter) on a job submitted after them, come back after a
// restart with their dependencies, which still hold. The controller used
// to restore single jobs before arrays and in job order, and then did not
// start at all: the core refused a dependency on a job it did not have yet.
func TestRestoreDependencyOrder(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	arrSpec := spec("a", 1, "u")
	arrSpec.Job.ArrayIndices = indices("0-1")
	arr := tc.submitSpec(arrSpec)
	onArr := tc.submitSpec(spec("a", 1, "", api.Dep{Type: jobid.AfterOK, On: arr}))
	early := tc.submitSpec(spec("a", 1, ""))
	late := tc.submitSpec(spec("a", 1, "u"))
	if r := tc.call(api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: early, Deps: &[]api.Dep{{Type: jobid.AfterOK, On: late}}}}); r.Error != nil {
		t.Fatalf("qalter: %v", r.Error)
	}
	tc.restart()
	for _, id := range []string{onArr, early} {
		if j := tc.job(id); j.State != api.StateQueued || j.Reason != "Dependency" || len(j.Deps) != 1 {
			t.Errorf("%s after the restart: %s %q deps %+v; want queued on its dependency", id, j.State, j.Reason, j.Deps)
		}
	}
	// The dependencies still work: late runs, then early.
	n := tc.attachNode("n1")
	if r := tc.call(api.Request{Op: api.OpRelease, IDs: []string{late}}); r.Error != nil || len(r.Errors) > 0 {
		t.Fatalf("qrls: %v %v", r.Error, r.Errors)
	}
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != late {
		t.Fatalf("started %s, want %s", st.Job.ID, late)
	}
	n.report(late, st.Run, api.RunExited, 0)
	for {
		if m := n.expect2(api.MsgStart, api.MsgRemove); m.Type == api.MsgStart {
			if m.Start.Job.ID != early {
				t.Fatalf("started %s, want %s", m.Start.Job.ID, early)
			}
			return
		}
	}
}

// TestRestorePurgedDependency: a waiting job whose dependency ended so
// long ago that the spool purged it comes back after a restart (that
// dependency was met: an unmet one fails its job when it ends), may be
// altered, and runs.
func TestRestorePurgedDependency(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	first := tc.submit("a", 1, nil)
	st := n.expect(api.MsgStart).Start
	n.report(first, st.Run, api.RunExited, 0)
	tc.waitState(first, api.StateFinished)
	then := tc.submitSpec(spec("a", 1, "u", api.Dep{Type: jobid.AfterOK, On: first}))
	// History has passed: the spool, the controller and the core let go
	// of first (the core keeps its outcome while then names it).
	if err := tc.ctl.do(context.Background(), func() {
		tc.ctl.purge(tc.clock.now().Add(tc.ctl.cfg.Cluster.History + time.Minute))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.ctl.sp.Get(context.Background(), first); !errors.Is(err, spool.ErrNotFound) {
		t.Fatalf("%s still in the spool after the purge: %v", first, err)
	}
	wall := 30 * time.Minute
	if r := tc.call(api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: then, Walltime: &wall}}); r.Error != nil {
		t.Fatalf("qalter after the purge: %v", r.Error)
	}
	tc.restart()
	if j := tc.job(then); j.State != api.StateHeld {
		t.Fatalf("after the restart: %s %q, want held", j.State, j.Reason)
	}
	// qalter gives the core the dependency back: it stays met.
	wall = 40 * time.Minute
	if r := tc.call(api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: then, Walltime: &wall}}); r.Error != nil {
		t.Fatalf("qalter after the restart: %v", r.Error)
	}
	n = tc.attachNode("n1")
	if r := tc.call(api.Request{Op: api.OpRelease, IDs: []string{then}}); r.Error != nil || len(r.Errors) > 0 {
		t.Fatalf("qrls: %v %v", r.Error, r.Errors)
	}
	if st := n.expect(api.MsgStart).Start; st.Job.ID != then {
		t.Fatalf("started %s, want %s", st.Job.ID, then)
	}
}

// TestRestoreRemovedShareAndNode: the configuration loses a share with a
// waiting job and a node with a running job, and takes effect by a reload
// or by a controller restart. Either way the controller keeps both jobs:
// the waiting one waits (ShareRemoved), the running one keeps its GPUs
// until its node's job lease has run out (nothing renews it: the node's
// hello is refused), then goes back to the queue and runs elsewhere. A
// restart used to fail: the core refused both jobs.
func TestRestoreRemovedShareAndNode(t *testing.T) {
	for _, how := range []string{"reload", "restart"} {
		t.Run(how, func(t *testing.T) {
			tc := newTestClusterWith(t, []string{"n1:8", "n2:8"}, twoShares, leaseKeys)
			n2 := tc.attachNode("n2")
			run := tc.runningOn(n2, "n2", 4)
			wait := tc.submit("b", 8, nil) // does not fit beside run

			text, err := os.ReadFile(tc.conf)
			if err != nil {
				t.Fatal(err)
			}
			smaller, _, _ := strings.Cut(string(text), "[[share]]\nname = \"b\"") // the last table
			smaller = strings.Replace(smaller, `nodes = "n1,n2"`, `nodes = "n1"`, 1)
			smaller = strings.Replace(smaller, "\n[[node]]\nnames = \"n2\"\ngpus = 8\n", "\n", 1)
			if strings.Contains(smaller, `"n2"`) || strings.Contains(smaller, `"b"`) {
				t.Fatalf("could not remove n2 and b:\n%s", smaller)
			}
			if err := os.WriteFile(tc.conf, []byte(smaller), 0o644); err != nil {
				t.Fatal(err)
			}
			var from string
			switch how {
			case "reload":
				if r := tc.call(api.Request{Op: api.OpReconfigure}); r.Error != nil {
					t.Fatalf("reload: %v", r.Error)
				}
				from = "reload"
			case "restart":
				tc.restart()
				from = "restart"
			}
			if j := tc.job(wait); j.State != api.StateQueued || j.Reason != "ShareRemoved" {
				t.Errorf("after the %s: the job of the removed share is %s %q", from, j.State, j.Reason)
			}
			n1 := tc.attachNode("n1")
			if j := tc.job(run); j.State != api.StateRunning {
				t.Fatalf("after the %s: the job on the removed node is %s %q, want running until its lease ends", from, j.State, j.Reason)
			}
			tc.advanceBeating(testNodeTimeout+time.Second, n1)
			j := tc.job(run)
			if j.State != api.StateRunning || j.Reason != api.ReasonNodeUnreachable || j.RequeueAt.IsZero() {
				t.Fatalf("after node_timeout: %s %q requeue at %v; want running, unreachable", j.State, j.Reason, j.RequeueAt)
			}
			tc.requeuedAt(run, j.RequeueAt, n1)
			if j := tc.job(wait); j.State != api.StateQueued || j.Reason != "ShareRemoved" {
				t.Errorf("the job of the removed share is %s %q", j.State, j.Reason)
			}
		})
	}
}

// TestRestoreArrayAfterRequeuedSubjob: an array whose indices have all
// started, its subjobs back in the queue, and an earlier job made
// (qalter) to depend on the array: after a restart the array is still
// begun and its subjob still waits. Restored for the dependent job first,
// the array came back with no index to start and no subjob in the core,
// and would finish at once.
func TestRestoreArrayAfterRequeuedSubjob(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	dep := tc.submitSpec(spec("a", 1, "u"))
	arrSpec := spec("a", 1, "")
	arrSpec.Job.ArrayIndices = indices("0-1")
	arr := tc.submitSpec(arrSpec)
	n := tc.attachNode("n1")
	var subs []string
	for range 2 {
		st := n.expect(api.MsgStart).Start
		n.report(st.Job.ID, st.Run, api.RunRunning, 0)
		subs = append(subs, st.Job.ID)
	}
	if r := tc.call(api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: dep, Deps: &[]api.Dep{{Type: jobid.AfterOK, On: arr}}}}); r.Error != nil {
		t.Fatalf("qalter: %v", r.Error)
	}
	if r := tc.call(api.Request{Op: api.OpDrain, Node: "n1"}); r.Error != nil {
		t.Fatalf("drain: %v", r.Error)
	}
	// The node comes back without them: both are requeued and wait (the
	// node is drained).
	tc.attachNode("n1")
	for _, s := range subs {
		tc.waitState(s, api.StateQueued)
	}
	tc.restart()
	if j := tc.job(arr); j.State != api.StateArray {
		t.Errorf("after the restart the array is %s %q, want begun", j.State, j.Reason)
	}
	for _, s := range subs {
		if j := tc.job(s); j.State != api.StateQueued {
			t.Errorf("after the restart the requeued subjob %s is %s %q, want queued", s, j.State, j.Reason)
		}
	}
	if j := tc.job(dep); j.State != api.StateHeld || len(j.Deps) != 1 {
		t.Errorf("after the restart %s is %s with deps %+v", dep, j.State, j.Deps)
	}
}
