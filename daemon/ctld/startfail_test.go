package ctld

import (
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// TestStartFailuresCountedAcrossRestarts checks the core's decision on
// starts that fail through the job's fault: requeued until the partition's
// start_failure_retries (default 2) are used up, then failed with a typed
// reason, the count kept in the spool across a controller restart.
func TestStartFailuresCountedAcrossRestarts(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	id := tc.submit("a", 1, nil)
	fail := func(n *scriptedNode) {
		t.Helper()
		st := n.expect(api.MsgStart).Start
		if st.Job.ID != id {
			t.Fatalf("start of %s, want %s", st.Job.ID, id)
		}
		n.send(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{
			JobID: id, Run: st.Run, State: "failed", ExitStatus: -1, Error: "image not found", Time: time.Now(),
		}})
		n.expect(api.MsgRemove)
	}
	fail(n)
	fail(n)
	if j := tc.job(id); j.StartFailures != 2 || j.State == api.StateFinished {
		t.Fatalf("after two failed starts: %+v", j)
	}
	// The third start was ordered to the node the restart drops; the
	// restarted controller starts it again (not the job's fault).
	tc.restart()
	n = tc.attachNode("n1")
	fail(n)
	j := tc.waitState(id, api.StateFinished)
	if j.Reason != "StartFailureRetriesExhausted: image not found" || j.ExitStatus == nil || *j.ExitStatus != -1 ||
		j.StartFailures != conf.DefaultStartFailureRetries+1 || j.Preemptions != 0 || j.NodeFailures != 0 {
		t.Fatalf("after the third failed start: reason %q exit %v start failures %d preemptions %d node failures %d",
			j.Reason, j.ExitStatus, j.StartFailures, j.Preemptions, j.NodeFailures)
	}
	n.quiet(200 * time.Millisecond)
}

// TestBeginTimeWakesTheLoop checks a job whose begin time comes starts
// then, the loop woken by the core's next wake time.
func TestBeginTimeWakesTheLoop(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	at := time.Now().Add(time.Second)
	id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, NotBefore: at}})
	// What qstat said before the begin time must be W (a loaded machine
	// may answer after it: then the start below is what is checked).
	if j := tc.job(id); j.State != api.StateWaiting && time.Now().Before(at) {
		t.Fatalf("state %s before its time, want W", j.State)
	}
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != id || time.Now().Before(at) {
		t.Fatalf("start of %s at %v, begin time %v", st.Job.ID, time.Now(), at)
	}
}

// TestPathRefusalFailsAtOnce: a node that refuses the job itself (an
// output path its user may not write) fails it with StartRefused at the
// first attempt; the old code retried it start_failure_retries times.
func TestPathRefusalFailsAtOnce(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	id := tc.submit("a", 1, nil)
	st := n.expect(api.MsgStart).Start
	n.send(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{
		JobID: id, Run: st.Run, State: api.RunFailed, ExitStatus: -1, Refusal: api.StartRefusedPath,
		Error: "cannot create job output file /root/out as 1000:1000: permission denied", Time: time.Now(),
	}})
	n.expect(api.MsgRemove)
	j := tc.waitState(id, api.StateFinished)
	// The refusal's words are the job's comment (qstat -f), not only in
	// its history (N8).
	const want = "StartRefused: cannot create job output file /root/out as 1000:1000: permission denied"
	if j.Reason != want || j.ExitStatus == nil || *j.ExitStatus != -1 || j.StartFailures != 1 {
		t.Fatalf("reason %q exit %v start failures %d, want %q, -1, 1", j.Reason, j.ExitStatus, j.StartFailures, want)
	}
	n.quiet(200 * time.Millisecond) // no second start
}
