//go:build !unit

package ctld

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestGraceCappedAndQdelShortens: -W grace is capped by the partition's
// max_preempt_grace (refused at submit, capped at stop time after a reload
// lowered it); a qdel of a job already stopping orders it to stop within
// preempt_grace (the node keeps the earlier deadline), and an admin's
// qdel -W force kills it without grace. A borrower's -W grace=1000000
// once made the lender wait 11 days, and root's qdel was ignored.
func TestGraceCappedAndQdelShortens(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	submit := func(grace time.Duration) (string, *api.Error) {
		return tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Grace: grace,
			Resources: api.Resources{GPUsPerNode: 1}}})
	}
	if _, e := submit(1000000 * time.Second); e == nil || !strings.Contains(e.Message, "max_preempt_grace 1h0m0s") {
		t.Fatalf("grace of 11 days: %v", e)
	}
	id, e := submit(50 * time.Minute)
	if e != nil {
		t.Fatal(e)
	}
	if g := n.expect(api.MsgStart).Start.Grace; g != 50*time.Minute {
		t.Fatalf("start order grace %v", g)
	}
	// The administrator lowers the cap; the running job's stop obeys it.
	text := strings.Replace(clusterTOML(tc.dir, tc.listen, []string{"n1:8"}, twoShares), `preempt_grace = "7s"`,
		"preempt_grace = \"7s\"\nmax_preempt_grace = \"1m\"", 1)
	if err := os.WriteFile(tc.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if _, e := submit(2 * time.Minute); e == nil || !strings.Contains(e.Message, "max_preempt_grace 1m0s") {
		t.Fatalf("grace above the new cap: %v", e)
	}
	stops := []struct {
		name  string
		who   Identity
		force bool
		grace time.Duration
		code  string
	}{
		{"qdel: the capped grace", alice, false, time.Minute, ""},
		{"qdel again: within preempt_grace", alice, false, 7 * time.Second, ""},
		{"force by a user", alice, true, -1, api.CodePermission},
		{"force by an admin", Identity{UID: 0, User: "root"}, true, 0, ""},
	}
	for _, s := range stops {
		t.Run(s.name, func(t *testing.T) {
			resp := callAs(tc.ctl, s.who, api.Request{Op: api.OpDelete, IDs: []string{id}, Force: s.force})
			if s.code != "" {
				if resp.Error == nil || resp.Error.Code != s.code {
					t.Fatalf("answer %+v, want %s", resp.Error, s.code)
				}
				n.quiet(100 * time.Millisecond)
				return
			}
			if resp.Error != nil {
				t.Fatal(resp.Error)
			}
			if m := n.expect(api.MsgStop).Stop; m.JobID != id || m.Grace != s.grace {
				t.Fatalf("stop order %+v, want grace %v", m, s.grace)
			}
		})
	}
	n.report(id, 0, "exited", 256+9)
	tc.waitState(id, api.StateFinished)
}
