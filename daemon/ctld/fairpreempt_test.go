//go:build !unit

package ctld

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestFairSharePreemptionThroughNodeProtocol: x borrows all 8 lendable
// GPUs; y's job waits while [scheduler] fair_preemption is off. A reload
// turning it on lets y's job preempt one of x's (y then borrows 4, x 4):
// the node gets the stop order with the partition's grace, y's job waits
// for it and starts on its GPUs, and x's job's history says why.
func TestFairSharePreemptionThroughNodeProtocol(t *testing.T) {
	shares := "[scheduler]\nfair_preemption = false\nfair_preemption_after = \"0s\"\n" + fairShares
	tc := newTestCluster(t, []string{"n1:8"}, shares)
	n := tc.attachNode("n1")
	x1 := tc.submit("x", 4, nil)
	x2 := tc.submit("x", 4, nil)
	for range 2 {
		st := n.expect(api.MsgStart).Start
		n.report(st.Job.ID, st.Run, "running", 0)
	}
	y1 := tc.submit("y", 4, nil)
	n.quiet(300 * time.Millisecond) // off: nothing is preempted
	if j := tc.job(y1); j.State != api.StateQueued || j.Reason != "QuotaExhausted" {
		t.Fatalf("y's job with fair preemption off: %s %q, want Q QuotaExhausted", j.State, j.Reason)
	}

	text, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	on := strings.Replace(string(text), "fair_preemption = false", "fair_preemption = true", 1)
	if err := os.WriteFile(tc.conf, []byte(on), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
		t.Fatalf("reload: %v", resp.Error)
	}
	stop := n.expect(api.MsgStop).Stop
	if stop.JobID != x2 || stop.Reason != "preempted" || stop.Grace != 7*time.Second {
		t.Fatalf("stop order: %+v, want %s preempted with 7s grace", stop, x2)
	}
	if j := tc.job(y1); j.State != api.StateQueued || j.Reason != "WaitingForPreemption" {
		t.Fatalf("y's job while the victim exits: %s %q", j.State, j.Reason)
	}
	n.quiet(200 * time.Millisecond) // x1 is not a victim: x would borrow less than y
	n.report(x2, 0, "exited", 0)
	n.expect(api.MsgRemove)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != y1 || len(st.GPUs) != 4 {
		t.Fatalf("y's job start: %+v", st)
	}
	j := tc.job(x2)
	if j.State != api.StateQueued || j.Preemptions != 1 {
		t.Fatalf("x's victim: %s, %d preemptions", j.State, j.Preemptions)
	}
	found := false
	for _, h := range j.History {
		found = found || strings.Contains(h.What, "preempted (fair_share) for "+y1)
	}
	if !found {
		t.Fatalf("x's victim's history %+v lacks the fair-share preemption", j.History)
	}
	if j := tc.job(x1); j.State != api.StateRunning {
		t.Fatalf("x's other job: %s, want running", j.State)
	}
}
