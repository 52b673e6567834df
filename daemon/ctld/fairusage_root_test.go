//go:build !unit

package ctld

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/spool"
)

// TestFairUsageSurvivesRestartAndReload: the decayed usage a borrower built
// up is in the spool after a stop, back in the core after a restart, taken
// from the spool alone after a crash (what the periodic save left), and
// kept across reloads that rename or remove the share.
func TestFairUsageSurvivesRestartAndReload(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, fairShares)
	n := tc.attachNode("n1")
	id := tc.submit("x", 4, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != id {
		t.Fatalf("start %+v", st)
	}
	n.report(id, 0, "running", 0)
	tc.advance(1200 * time.Millisecond) // the controller's clock and its tick: usage accrues
	n.report(id, 0, "exited", 0)
	n.expect(api.MsgRemove)
	tc.waitState(id, api.StateFinished)
	before := tc.fairUsage("x")
	// 4 GPUs for at least a second; the 7 day half-life takes nothing.
	if before < 4 || before > 4*60 {
		t.Fatalf("usage of x after 4 GPUs for about a second: %v GPU-s", before)
	}
	if u := tc.fairUsage("y"); u != 0 {
		t.Fatalf("usage of y, which borrowed nothing: %v", u)
	}
	for _, s := range tc.call(api.Request{Op: api.OpShares}).Shares {
		if s.Name == "x" && math.Abs(s.FairUsage*3600-before) > 1e-6*before {
			t.Fatalf("qstat -Q: x's fair usage %v GPU-h, want %v GPU-s", s.FairUsage, before)
		}
	}

	// A stop saves it; the restarted core has it back.
	tc.stop()
	st, ok := storedUsage(t, tc)
	if !ok || math.Abs(shareUse(st, "x")-before) > 1e-6*before {
		t.Fatalf("usage in the spool after a stop: %+v, want x = %v", st, before)
	}
	tc.start()
	if got := tc.fairUsage("x"); math.Abs(got-before) > 1e-3*before {
		t.Fatalf("usage of x after a restart: %v, want %v", got, before)
	}

	// A crash leaves what the last periodic save wrote: the next start
	// takes it from the spool alone.
	tc.stop()
	sp, err := spool.Open(filepath.Join(tc.dir, "spool"), spool.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeUsage(sched.UsageState{At: time.Now(), Shares: []sched.ShareUse{{Share: "x", Borrowed: 5000},
		{Share: "y", Borrowed: 70, Users: []sched.UserUse{{User: "alice", GPUSeconds: 70}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.SetState(context.Background(), usageKey, b); err != nil {
		t.Fatal(err)
	}
	sp.Close()
	tc.start()
	if x, y := tc.fairUsage("x"), tc.fairUsage("y"); math.Abs(x-5000) > 1 || math.Abs(y-70) > 0.1 {
		t.Fatalf("usage after a crash: x %v y %v, want 5000 and 70", x, y)
	}

	// A reload renaming x and removing y keeps their usage under their
	// names (it decays there); the new name starts from none. Renaming
	// back finds it again.
	orig, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(orig), `name = "x"`, `name = "x2"`, 1)
	renamed = renamed[:strings.LastIndex(renamed, "[[share]]")]
	reload := func(text string) {
		t.Helper()
		if err := os.WriteFile(tc.conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
			t.Fatalf("reload: %v", resp.Error)
		}
	}
	reload(renamed + "\n[scheduler]\nfair_share = false\n")
	if x, x2 := tc.fairUsage("x"), tc.fairUsage("x2"); math.Abs(x-5000) > 1 || x2 != 0 {
		t.Fatalf("after renaming x to x2: x %v x2 %v", x, x2)
	}
	n = tc.attachNode("n1")
	id2 := tc.submit("x2", 2, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != id2 {
		t.Fatalf("start in the renamed share: %+v", st)
	}
	reload(string(orig))
	if x, y := tc.fairUsage("x"), tc.fairUsage("y"); math.Abs(x-5000) > 1 || math.Abs(y-70) > 0.1 {
		t.Fatalf("after renaming back: x %v y %v", x, y)
	}
	if j := tc.job(id2); j.State != api.StateRunning {
		t.Fatalf("the renamed share's job after the reload: %s", j.State)
	}
}
