package ctld

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// A node that refuses starts on a GPU with a fault the controller has not
// read yet (api.JobStateMsg.GPUFault) fails them as the node's: the job
// is requeued uncounted, and the node is not drained as one whose
// container runtime fails (RuntimeFailing), however often; once the fault
// arrives the job starts on another GPU.
func TestGPUFaultRefusalIsNodeSide(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNodeWith("n1", nvmlInventory(8))
	id := tc.submit("a", 1, nil)
	const refusals = nodeFaultStarts + 1
	var gpu int
	for run := range refusals {
		st := n.expect(api.MsgStart).Start
		if st.Job.ID != id || st.Run != run {
			t.Fatalf("start %d: %+v", run, st)
		}
		gpu = st.GPUs[0]
		why := "GPU " + strconv.Itoa(gpu) + " of n1 is unhealthy (Xid 79: GPU has fallen off the bus since 2026-03-01T12:00:00Z): fenced"
		if run == refusals-1 {
			// The heartbeat with the fault comes before the last refusal.
			n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUFaults: []api.GPUFault{{Index: gpu, Kind: api.GPUFaultXid, Xid: 79, Fatal: true,
				Reason: "Xid 79: GPU has fallen off the bus", Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}})
		}
		n.send(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{
			JobID: id, Run: run, State: api.RunFailed, ExitStatus: -1, Error: why, NodeFault: true, GPUFault: true, Time: time.Now(),
		}})
		if run == refusals-1 {
			// The fault stops what the controller believes runs there.
			n.expect(api.MsgStop)
		}
		n.expect(api.MsgRemove)
	}
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != id || slices.Contains(st.GPUs, gpu) {
		t.Fatalf("start after the fault %+v, want %s off GPU %d", st, id, gpu)
	}
	n.report(id, st.Run, api.RunRunning, 0)
	j := tc.waitState(id, api.StateRunning)
	if j.StartFailures != 0 || j.NodeFailures != 0 || !slices.ContainsFunc(j.History, func(h api.HistoryEntry) bool {
		return strings.HasPrefix(h.What, "requeued: could not start on n1: GPU ") && strings.Contains(h.What, "is unhealthy (Xid 79")
	}) {
		t.Fatalf("job: %d start failures, %d node failures, history %+v", j.StartFailures, j.NodeFailures, j.History)
	}
	node := tc.call(api.Request{Op: api.OpNodes}).Nodes[0]
	if node.State != "up" || slices.ContainsFunc(node.Problems, func(p string) bool { return strings.Contains(p, reasonRuntimeFailing) }) {
		t.Fatalf("node after GPU refusals: %s %q", node.State, node.Problems)
	}
}
