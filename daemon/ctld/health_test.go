package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

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

// failStart takes job id's start of run and fails it as the node's fault
// (its runtime cannot start containers), with why as the error.
func (n *scriptedNode) failStart(id string, run int, why string) {
	n.t.Helper()
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != id || st.Run != run {
		n.t.Fatalf("start %d: %+v", run, st)
	}
	n.send(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{
		JobID: id, Run: run, State: "failed", ExitStatus: -1, Error: why, NodeFault: true, Time: time.Now(),
	}})
	n.expect(api.MsgRemove)
}

// awaitNodeProblem waits until show nodes gives the single node state
// and a first problem starting with prefix.
func (tc *testCluster) awaitNodeProblem(state, prefix string) {
	tc.t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes
		if len(nodes) >= 1 && nodes[0].State == state && len(nodes[0].Problems) > 0 && strings.HasPrefix(nodes[0].Problems[0], prefix) {
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("show nodes: %+v, want %s %q...", nodes, state, prefix)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRuntimeFailingNodeRetried (F4): a node drained for its runtime gets
// one trial start after Limits.RuntimeRetry (at its next heartbeat): one
// that fails the node's way drains it again at once, one that runs clears
// it. The job is never charged.
func TestRuntimeFailingNodeRetried(t *testing.T) {
	tc := newTestClusterLimits(t, []string{"n1:8"}, twoShares, "", Limits{RuntimeRetry: time.Nanosecond})
	n := tc.attachNode("n1")
	const why = "job 1.t: start: create task: the node's container runtime cannot start containers: no cgroup mount found"
	id := tc.submit("a", 4, nil)
	for run := range nodeFaultStarts {
		n.failStart(id, run, why)
	}
	tc.awaitNodeProblem("drained", reasonRuntimeFailing+": 3 job starts failed here")
	// The trial at the next heartbeat fails: drained again at once.
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1"})
	n.failStart(id, nodeFaultStarts, why)
	tc.awaitNodeProblem("drained", reasonRuntimeFailing+": 3 job starts failed here")
	n.quiet(200 * time.Millisecond)
	// Repaired: the next trial runs, and the node is up again.
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1"})
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != id || st.Run != nodeFaultStarts+1 {
		t.Fatalf("trial start: %+v", st)
	}
	n.report(id, st.Run, "running", 0)
	tc.awaitNode("up", "")
	n.report(id, st.Run, "exited", 0)
	if j := tc.waitState(id, api.StateFinished); j.StartFailures != 0 || j.ExitStatus == nil || *j.ExitStatus != 0 {
		t.Fatalf("job: exit %v, %d start failures", j.ExitStatus, j.StartFailures)
	}
	if got := counterValue(t, tc.ctl, "sharq_node_runtime_drains_total"); got != 2 {
		t.Fatalf("sharq_node_runtime_drains_total = %v, want 2", got)
	}
}

// TestRuntimeSelfTestClearsDrain (F4): a node drained for its runtime is
// resumed as soon as its daemon reports one more runtime self-test passed
// than before the drain (long before Limits.RuntimeRetry); the same count
// again, or a restarted daemon's lower one, changes nothing.
func TestRuntimeSelfTestClearsDrain(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", SelfTests: 2}) // passed before, on an earlier failure
	const why = "job 1.t: start: create task: the node's container runtime cannot start containers: no cgroup mount found"
	id := tc.submit("a", 4, nil)
	for run := range nodeFaultStarts {
		n.failStart(id, run, why)
	}
	tc.awaitNodeProblem("drained", reasonRuntimeFailing+": 3 job starts failed here")
	for _, tt := range []struct {
		name   string
		passed uint64
	}{{"the same count", 2}, {"a restarted daemon's", 0}} {
		n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", SelfTests: tt.passed})
		n.quiet(200 * time.Millisecond)
		tc.awaitNodeProblem("drained", reasonRuntimeFailing)
		t.Logf("%s (%d): still drained", tt.name, tt.passed)
	}
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", SelfTests: 1})
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != id || st.Run != nodeFaultStarts {
		t.Fatalf("start after the self-test: %+v", st)
	}
	tc.awaitNode("up", "")
	n.report(id, st.Run, "running", 0)
	n.report(id, st.Run, "exited", 0)
	if j := tc.waitState(id, api.StateFinished); j.StartFailures != 0 || j.ExitStatus == nil || *j.ExitStatus != 0 {
		t.Fatalf("job: exit %v, %d start failures", j.ExitStatus, j.StartFailures)
	}
}

// counterValue reads a counter of the controller's metrics.
func counterValue(t *testing.T, c *Controller, name string) float64 {
	t.Helper()
	mfs, err := c.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
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
