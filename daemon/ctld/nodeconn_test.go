package ctld

import (
	"fmt"
	"testing"
	"time"

	"sharq/api"
)

// A big array of jobs that all fit at once does not flood its node: at
// most startWindow starts are unanswered, the connection stays up, and
// each answer lets one more start through. (Before, every start went out at
// once, and past 4096 queued orders the node was disconnected.)
func TestStartOrdersFlowControlled(t *testing.T) {
	const subjobs = 1000
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	// A node with CPUs for every subjob (each counts one).
	n := tc.attachNodeWith("n1", &api.Inventory{Source: "config", CPUs: subjobs})
	n.heartbeats(200 * time.Millisecond)
	tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "many", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1}, ArrayIndices: fmt.Sprintf("0-%d", subjobs-1)}})
	var starts []*api.StartOrder
	for range startWindow {
		starts = append(starts, n.expect(api.MsgStart).Start)
	}
	n.quiet(300 * time.Millisecond)
	// Each answer (running, or a failure) frees one place.
	for i, st := range starts[:10] {
		state := "running"
		if i%2 == 1 {
			state = "exited"
		}
		n.report(st.Job.ID, st.Run, state, 0)
		for {
			m := n.expect2(api.MsgStart, api.MsgRemove)
			if m.Type == api.MsgStart {
				break
			}
		}
	}
	n.quiet(300 * time.Millisecond)
	if nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes; nodes[0].State != "up" {
		t.Fatalf("node after %d queued starts: %+v", subjobs, nodes[0])
	}
}
