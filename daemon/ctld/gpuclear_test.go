package ctld

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// A GPU fault an admin cleared stays cleared across a controller restart
// while the node daemon still reports it: the GPU is not fenced again and
// the job placed on it since is not stopped; a fault not cleared (another
// GPU, reported with it) is fenced. Once the node no longer reports the
// cleared fault the spool forgets it too.
func TestClearedGPUFaultsSurviveRestart(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNodeWith("n1", nvmlInventory(8))
	t0 := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	xid := api.GPUFault{Index: 0, Kind: api.GPUFaultXid, Xid: 79, Reason: "Xid 79: GPU has fallen off the bus", Fatal: true, Time: t0}
	unhealthy := func(want ...int) {
		t.Helper()
		var got []int
		for deadline := time.Now().Add(testWait); ; {
			got = nil
			for _, f := range tc.call(api.Request{Op: api.OpNodes}).Nodes[0].UnhealthyGPUs {
				got = append(got, f.Index)
			}
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("unhealthy GPUs %v, want %v", got, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUFaults: []api.GPUFault{xid}})
	unhealthy(0)
	if resp := tc.call(api.Request{Op: api.OpResume, Node: "n1"}); resp.Error != nil {
		t.Fatalf("resume: %v", resp.Error)
	}
	unhealthy()
	a := tc.submit("a", 4, nil)
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != a || !slices.Contains(st.GPUs, 0) {
		t.Fatalf("start %+v, want %s on the cleared GPU 0", st, a)
	}
	n.report(a, st.Run, api.RunRunning, 0)
	tc.waitState(a, api.StateRunning)

	tc.restart()
	// The node daemon still reports the cleared fault, and a new one.
	later := api.GPUFault{Index: 5, Kind: api.GPUFaultECC, Reason: "double-bit ECC error", Time: t0.Add(time.Second)}
	n = tc.attachHello(api.NodeMsg{Node: "n1", Inventory: nvmlInventory(8), Running: []api.RunningJob{{JobID: a, Run: st.Run}},
		GPUFaults: []api.GPUFault{xid, later}})
	unhealthy(5)
	n.quiet(300 * time.Millisecond) // a is not stopped
	if j := tc.job(a); j.State != api.StateRunning || slices.ContainsFunc(j.History, func(h api.HistoryEntry) bool {
		return strings.Contains(h.What, "GPU 0 of n1 unhealthy")
	}) {
		t.Fatalf("a after the restart: %s, %+v", j.State, j.History)
	}

	// The node forgets the fault (its daemon restarted after the reset):
	// so does the spool.
	since := tc.clock.now()
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUFaults: []api.GPUFault{later}})
	tc.heard("n1", since)
	tc.restart()
	var cleared int
	if err := tc.ctl.do(context.Background(), func() { cleared = len(tc.ctl.node("n1").gpu.cleared) }); err != nil {
		t.Fatal(err)
	}
	if cleared != 0 {
		t.Errorf("%d cleared faults restored, want none", cleared)
	}
}
