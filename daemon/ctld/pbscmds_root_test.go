//go:build !unit

package ctld

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestSignal is qsig against the controller and a scripted node: only a
// running job's owner or an admin may signal it, the node gets the signal
// for the job's current run, and the job's history says who sent what.
func TestSignal(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	running := tc.submit("b", 8, nil)
	n.expect(api.MsgStart)
	n.report(running, 0, "running", 0)
	queued := tc.submit("b", 8, nil)
	tests := []struct {
		name string
		who  *Identity // nil: root, an admin
		ids  []string
		sig  api.Signal
		code string // "": success, the node gets the signal
	}{
		{name: "owner", who: &alice, ids: []string{running}, sig: "SIGUSR1"},
		{name: "admin", ids: []string{running}, sig: "SIGTERM"},
		{name: "another user", who: &mallory, ids: []string{running}, sig: "SIGUSR1", code: api.CodePermission},
		{name: "queued job", who: &alice, ids: []string{queued}, sig: "SIGUSR1", code: api.CodeInvalidState},
		{name: "unknown job", who: &alice, ids: []string{"999"}, sig: "SIGUSR1", code: api.CodeUnknownJob},
		{name: "no signal", who: &alice, ids: []string{running}, code: api.CodeBadRequest},
		{name: "no job", who: &alice, sig: "SIGUSR1", code: api.CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := api.Request{Op: api.OpSignal, IDs: tt.ids, Signal: tt.sig}
			var resp *api.Response
			if tt.who == nil {
				resp = tc.call(req)
			} else {
				resp = tc.asUser(*tt.who, req)
			}
			if tt.code != "" {
				if resp.Error == nil || resp.Error.Code != tt.code {
					t.Fatalf("error %+v, want code %s", resp.Error, tt.code)
				}
				n.quiet(50 * time.Millisecond)
				return
			}
			if resp.Error != nil {
				t.Fatalf("qsig: %v", resp.Error)
			}
			o := n.expect(api.MsgSignal).Signal
			if o == nil || o.JobID != running || o.Run != 0 || o.Signal != tt.sig {
				t.Fatalf("signal order %+v", o)
			}
			h := tc.job(running).History
			if !slices.ContainsFunc(h, func(e api.HistoryEntry) bool { return strings.HasPrefix(e.What, "signal "+string(tt.sig)+" sent by") }) {
				t.Errorf("no history entry of the signal: %+v", h)
			}
		})
	}
	// A job being stopped is not signalled.
	if resp := tc.call(api.Request{Op: api.OpDelete, IDs: []string{running}}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	n.expect(api.MsgStop)
	if resp := tc.asUser(alice, api.Request{Op: api.OpSignal, IDs: []string{running}, Signal: "SIGUSR1"}); resp.Error == nil || resp.Error.Code != api.CodeInvalidState {
		t.Errorf("qsig of a stopping job: %+v", resp.Error)
	}
}

// TestMove is qmove against the controller: a waiting job moves to another
// share of its partition and starts there on that share's quota; moves
// the rules forbid are refused, each with its code.
func TestMove(t *testing.T) {
	shares := twoShares + `
[[share]]
name = "bobs"
partition = "gpu"
gpus = 0
strategy = "LEND_AND_BORROW"
borrow_limit = -1
users = ["bob"]
`
	tc := newTestCluster(t, []string{"n1:8"}, shares)
	n := tc.attachNode("n1")
	running := tc.submit("a", 4, nil)
	n.expect(api.MsgStart)
	waiting := tc.submit("a", 4, nil) // a is LEND: it never borrows
	held := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "h", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Hold: "u",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}})
	n.quiet(100 * time.Millisecond)
	for _, tt := range []struct {
		name  string
		who   Identity
		id    string
		share string
		code  string
	}{
		{name: "running job", who: alice, id: running, share: "b", code: api.CodeInvalidState},
		{name: "another user's job", who: mallory, id: waiting, share: "b", code: api.CodePermission},
		{name: "a share the owner may not use", who: alice, id: waiting, share: "bobs", code: api.CodePermission},
		{name: "unknown share", who: alice, id: waiting, share: "nope", code: api.CodeBadRequest},
		{name: "another server", who: alice, id: waiting, share: "b@elsewhere", code: api.CodeBadRequest},
		{name: "unknown job", who: alice, id: "999", share: "b", code: api.CodeUnknownJob},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := tc.asUser(tt.who, api.Request{Op: api.OpMove, IDs: []string{tt.id}, Share: tt.share})
			if resp.Error == nil || resp.Error.Code != tt.code {
				t.Fatalf("error %+v, want code %s", resp.Error, tt.code)
			}
			if j := tc.job(waiting); j.Share != "a" {
				t.Fatalf("refused move changed the share to %s", j.Share)
			}
		})
	}
	// An admin may move a job to a share its owner may not use.
	if resp := tc.call(api.Request{Op: api.OpMove, IDs: []string{held}, Share: "bobs"}); resp.Error != nil {
		t.Fatalf("admin's qmove: %v", resp.Error)
	}
	if j := tc.job(held); j.Share != "bobs" || j.State != api.StateHeld {
		t.Fatalf("held job after the move: share %s state %s", j.Share, j.State)
	}
	// b borrows a's idle GPUs: the moved job starts at once.
	if resp := tc.asUser(alice, api.Request{Op: api.OpMove, IDs: []string{waiting}, Share: "b@"}); resp.Error != nil {
		t.Fatalf("qmove: %v", resp.Error)
	}
	if st := n.expect(api.MsgStart).Start; st.Job.ID != waiting || st.Job.Share != "b" {
		t.Fatalf("start after the move: %+v", st)
	}
	j := tc.job(waiting)
	if j.Share != "b" || !slices.ContainsFunc(j.History, func(e api.HistoryEntry) bool { return e.What == "moved from a to b by alice" }) {
		t.Errorf("moved job: share %s history %+v", j.Share, j.History)
	}
	// The move survives a restart.
	tc.restart()
	if j := tc.job(held); j.Share != "bobs" {
		t.Errorf("after a restart: share %s", j.Share)
	}
}

// TestMoveLiftsSystemHold: a job held by the system because its share can
// no longer hold it (a reload lowered the quota) loses that hold when it
// moves to a share that can, and keeps its user's hold.
func TestMoveLiftsSystemHold(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	tc.attachNode("n1")
	id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "h", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Hold: "u",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 4}}})
	text, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tc.conf, []byte(strings.Replace(string(text), "gpus = 4", "gpus = 2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	deadline := time.Now().Add(testWait)
	for !strings.Contains(tc.job(id).Hold, "s") {
		if time.Now().After(deadline) {
			t.Fatalf("no system hold after the reload: %+v", tc.job(id))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if resp := tc.asUser(alice, api.Request{Op: api.OpMove, IDs: []string{id}, Share: "b"}); resp.Error != nil {
		t.Fatalf("qmove: %v", resp.Error)
	}
	if j := tc.job(id); j.Hold != "u" || j.State != api.StateHeld || j.Share != "b" {
		t.Errorf("after the move: hold %q state %s share %s, want u H b", j.Hold, j.State, j.Share)
	}
}

// TestSystemHoldFollowsTheCore: the system hold is the core's decision
// (sched.Plan.Holds): set when a reload makes a job's share unable to hold
// it, and released when another reload lets it fit again; the controller
// only records both.
func TestSystemHoldFollowsTheCore(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	tc.attachNode("n1")
	id := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "h", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Hold: "u",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 4}}})
	text, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	reload := func(conf string) {
		t.Helper()
		if err := os.WriteFile(tc.conf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
			t.Fatal(resp.Error)
		}
	}
	waitHold := func(want string) api.Job {
		t.Helper()
		deadline := time.Now().Add(testWait)
		for {
			j := tc.job(id)
			if j.Hold == want {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("hold %q, want %q: %+v", j.Hold, want, j)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	reload(strings.Replace(string(text), "gpus = 4", "gpus = 2", 1))
	waitHold("us")
	reload(string(text))
	j := waitHold("u")
	var said []string
	for _, h := range j.History {
		said = append(said, h.What)
	}
	if !slices.ContainsFunc(said, func(s string) bool { return strings.HasPrefix(s, "held by the system") }) ||
		!slices.ContainsFunc(said, func(s string) bool { return strings.HasPrefix(s, "released by the system") }) {
		t.Errorf("history %q does not say the system held and released it", said)
	}
}
