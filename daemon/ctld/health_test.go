package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// An unhealthy node gets no jobs and says why in show nodes; a start that
// failed because of the node is requeued without counting against the job;
// the node takes jobs again once healthy.
func TestUnhealthyNode(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	const why = "container runtime unavailable: containerd: connection refused"
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", Health: why})
	tc.awaitNode("unhealthy", why)
	id := tc.submit("a", 1, nil)
	n.quiet(300 * time.Millisecond)
	if j := tc.job(id); j.State != api.StateQueued {
		t.Fatalf("job on an unhealthy node: %+v", j)
	}

	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1"})
	// More node-fault failures than a job's start may fail: it stays queued.
	for run := 0; run <= conf.DefaultStartFailureRetries+1; run++ {
		st := n.expect(api.MsgStart).Start
		if st.Job.ID != id || st.Run != run {
			t.Fatalf("start %d: %+v", run, st)
		}
		n.send(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{
			JobID: id, Run: run, State: "failed", ExitStatus: -1, Error: why, NodeFault: true, Time: time.Now(),
		}})
		n.expect(api.MsgRemove)
	}
	st := n.expect(api.MsgStart).Start
	n.report(id, st.Run, "running", 0)
	n.report(id, st.Run, "exited", 0)
	j := tc.waitState(id, api.StateFinished)
	if j.ExitStatus == nil || *j.ExitStatus != 0 || strings.Contains(j.Reason, "StartFailed") {
		t.Fatalf("job after node faults: exit %v reason %q", j.ExitStatus, j.Reason)
	}
	if nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes; nodes[0].State != "up" || len(nodes[0].Problems) != 0 {
		t.Fatalf("show nodes once healthy: %+v", nodes[0])
	}
}

// A drain by an admin and ill health are separate: resuming does not place
// jobs on an unhealthy node, and health back does not undo the drain.
func TestDrainAndHealthAreSeparate(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	if resp := tc.call(api.Request{Op: api.OpDrain, Node: "n1"}); resp.Error != nil {
		t.Fatalf("drain: %v", resp.Error)
	}
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", Health: "sick"})
	tc.awaitNode("drained", "sick")
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1"})
	tc.awaitNode("drained", "")
	tc.submit("a", 1, nil)
	n.quiet(300 * time.Millisecond)
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", Health: "sick"})
	tc.awaitNode("drained", "sick")
	if resp := tc.call(api.Request{Op: api.OpResume, Node: "n1"}); resp.Error != nil {
		t.Fatalf("resume: %v", resp.Error)
	}
	n.quiet(300 * time.Millisecond)
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1"})
	n.expect(api.MsgStart)
}

// awaitNode waits until show nodes gives the single node state and, first
// among its problems, problem ("" = none).
func (tc *testCluster) awaitNode(state, problem string) {
	tc.t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes
		if len(nodes) == 1 && nodes[0].State == state &&
			(problem == "" && len(nodes[0].Problems) == 0 || len(nodes[0].Problems) > 0 && nodes[0].Problems[0] == problem) {
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("show nodes: %+v, want %s %q", nodes, state, problem)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The node's reason for an exit (a memory kill) becomes the job's comment.
func TestOOMKillIsTheComment(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	id := tc.submit("a", 1, nil)
	n.expect(api.MsgStart)
	n.report(id, 0, "running", 0)
	n.send(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{JobID: id, Run: 0, State: "exited", ExitStatus: 137, Error: "OOM killed", Time: time.Now()}})
	n.expect(api.MsgRemove)
	j := tc.waitState(id, api.StateFinished)
	if j.ExitStatus == nil || *j.ExitStatus != 137 || j.Reason != "OOM killed" {
		t.Fatalf("job after a memory kill: exit %v comment %q", j.ExitStatus, j.Reason)
	}
}
