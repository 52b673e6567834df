package ctld

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestPanicInRequestRebuildsFromSpool: an operation that panics halfway
// fails its caller, the controller keeps serving, a change it made only in
// memory is gone (memory is rebuilt from the spool), acknowledged jobs are
// all there, and nodes are made to say hello again.
func TestPanicInRequestRebuildsFromSpool(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	running := tc.submit("a", 1, nil)
	n.expect(api.MsgStart)
	n.report(running, 0, "running", 0)
	pending := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, Hold: "u"}}) // stays pending
	err := tc.ctl.do(context.Background(), func() {
		tc.ctl.jobs[pending].Name = "half-applied"
		panic("a bug in a request handler")
	})
	if !errors.Is(err, errPanicked) {
		t.Fatalf("do = %v, want errPanicked", err)
	}
	if j := tc.job(pending); j.Name != "j" {
		t.Fatalf("name %q survived in memory without being written", j.Name)
	}
	if j := tc.job(running); j.State != api.StateRunning {
		t.Fatalf("running job after the rebuild: %s", j.State)
	}
	select { // the node's connection was closed: it reconnects and says hello
	case _, ok := <-n.msgs:
		for ok {
			_, ok = <-n.msgs
		}
	case <-time.After(testWait):
		t.Fatal("node connection not closed after the rebuild")
	}
	n = tc.attachNode("n1", api.RunningJob{JobID: running, Run: 0})
	n.quiet(100 * time.Millisecond) // the run is known: no stop, no second start
	if resp := callAs(tc.ctl, alice, api.Request{Op: api.OpStat, Stat: &api.StatFilter{}}); resp.Error != nil || len(resp.Jobs) != 2 {
		t.Fatalf("stat after the panic: %+v, %d jobs", resp.Error, len(resp.Jobs))
	}
	// A panic outside the loop (in a request that does not reach it) fails
	// that request only.
	resp := tc.ctl.handleSafe(context.Background(), alice, nil)
	if resp.Error == nil || resp.Error.Code != api.CodeInternal {
		t.Fatalf("nil request: %+v", resp)
	}
}
