//go:build !unit

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
	// As many node-fault failures as a job's start may fail: it stays
	// queued, and the node, which failed them all, is drained
	// (RuntimeFailing) until an admin resumes it.
	for run := 0; run <= conf.DefaultStartFailureRetries; run++ {
		n.failStart(id, run, why)
	}
	tc.awaitNodeProblem("drained", reasonRuntimeFailing+": ")
	if j := tc.job(id); j.State != api.StateQueued || j.StartFailures != 0 {
		t.Fatalf("job after node faults: %s, %d start failures", j.State, j.StartFailures)
	}
	if resp := tc.call(api.Request{Op: api.OpResume, Node: "n1"}); resp.Error != nil {
		t.Fatalf("resume: %v", resp.Error)
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

// TestRuntimeFailingNodeDrained (F4): a node whose runtime cannot start
// containers fails each start as the node's fault; the jobs are not
// charged a retry, and after nodeFaultStarts such failures the node is
// drained with a typed reason, so the job runs on another node.
func TestRuntimeFailingNodeDrained(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	bad := tc.attachNode("n1")
	const why = "job 1.t: start: start job 1.t: create task: the node's container runtime cannot start containers: OCI runtime create failed: runc create failed: no cgroup mount found in mountinfo"
	id := tc.submit("a", 4, nil)
	for run := range nodeFaultStarts {
		bad.failStart(id, run, why)
	}
	tc.awaitNodeProblem("drained", reasonRuntimeFailing+": 3 job starts failed here")
	bad.quiet(300 * time.Millisecond) // no fourth start there
	if j := tc.job(id); j.State != api.StateQueued || j.StartFailures != 0 {
		t.Fatalf("job after its node failed it: %s %q, %d start failures", j.State, j.Reason, j.StartFailures)
	}
	if got := counterValue(t, tc.ctl, "sharq_node_runtime_drains_total"); got != 1 {
		t.Fatalf("sharq_node_runtime_drains_total = %v", got)
	}
	// Another node runs it.
	good := tc.attachNode("n2")
	st := good.expect(api.MsgStart).Start
	if st.Job.ID != id {
		t.Fatalf("start on n2: %+v", st)
	}
	good.report(id, st.Run, "running", 0)
	good.report(id, st.Run, "exited", 0)
	if j := tc.waitState(id, api.StateFinished); j.ExitStatus == nil || *j.ExitStatus != 0 || j.StartFailures != 0 {
		t.Fatalf("job on n2: exit %v, %d start failures", j.ExitStatus, j.StartFailures)
	}
	// Repaired: the admin resumes n1, which takes jobs again.
	if resp := tc.call(api.Request{Op: api.OpResume, Node: "n1"}); resp.Error != nil {
		t.Fatalf("resume: %v", resp.Error)
	}
	next := tc.submit("a", 4, nil)
	if st := bad.expect(api.MsgStart).Start; st.Job.ID != next {
		t.Fatalf("start on n1 after resume: %+v", st)
	}
}
