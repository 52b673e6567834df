package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// attachSessionNode is attachNode for a node that serves sessions at addr.
func (tc *testCluster) attachSessionNode(name, addr string) *scriptedNode {
	tc.t.Helper()
	return tc.attachHello(api.NodeMsg{Node: name, Inventory: &api.Inventory{Source: "config", CPUs: 8}, SessionAddr: addr})
}

// TestSessionGrant: the controller grants a session to the job's owner
// only, for a running job on one of its nodes, and sends the node the same
// one-time token bound to the job, run and uid; the address is the node's,
// with its unspecified host replaced by where the node connects from.
func TestSessionGrant(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachSessionNode("n1", "0.0.0.0:6821")
	pending := tc.submitHeld("a", 1) // held: never starts
	id := tc.submit("a", 1, nil)
	n.expect(api.MsgStart)
	n.report(id, 0, api.RunRunning, 0)

	for _, tc2 := range []struct {
		name string
		who  Identity
		spec api.SessionSpec
		code string
		msg  string
	}{
		{"another user", mallory, api.SessionSpec{Job: id}, api.CodePermission, "Unauthorized"},
		{"unknown job", alice, api.SessionSpec{Job: "999.t"}, api.CodeUnknownJob, "Unknown Job Id"},
		{"not running", alice, api.SessionSpec{Job: pending}, api.CodeInvalidState, "not running"},
		{"not its node", alice, api.SessionSpec{Job: id, Node: "n9"}, api.CodeBadRequest, `does not run on node "n9"`},
		{"primary of a batch job", alice, api.SessionSpec{Job: id, Primary: true}, api.CodeBadRequest, "not interactive"},
		{"NUL in the command", alice, api.SessionSpec{Job: id, Command: []string{"a\x00b"}}, api.CodeBadRequest, "NUL"},
		{"too many arguments", alice, api.SessionSpec{Job: id, Command: make([]string, api.MaxSessionArgs+1)}, api.CodeBadRequest, "arguments"},
	} {
		t.Run(tc2.name, func(t *testing.T) {
			spec := tc2.spec
			resp := callAs(tc.ctl, tc2.who, api.Request{Op: api.OpSession, Session: &spec})
			if resp.Error == nil || resp.Error.Code != tc2.code || !strings.Contains(resp.Error.Message, tc2.msg) {
				t.Fatalf("error %+v, want %s with %q", resp.Error, tc2.code, tc2.msg)
			}
		})
	}
	select {
	case m := <-n.msgs:
		t.Fatalf("a refused session sent the node %+v", m)
	case <-time.After(100 * time.Millisecond):
	}

	resp := callAs(tc.ctl, alice, api.Request{Op: api.OpSession, Session: &api.SessionSpec{Job: id, Command: []string{"nvidia-smi"}}})
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	g := resp.Session
	if g.Addr != "127.0.0.1:6821" || g.Node != "n1" || len(g.Token) != 64 || g.Munge || time.Until(g.Expires) <= 0 {
		t.Fatalf("grant %+v", g)
	}
	o := n.expect(api.MsgSession).Session
	if o.Token != g.Token || o.JobID != id || o.Run != 0 || o.UID != 1000 || o.Primary || len(o.Command) != 1 {
		t.Fatalf("order %+v for grant %+v", o, g)
	}
	again := callAs(tc.ctl, alice, api.Request{Op: api.OpSession, Session: &api.SessionSpec{Job: id}}).Session
	if again == nil || again.Token == g.Token {
		t.Fatalf("a second grant reuses the token: %+v", again)
	}
	n.expect(api.MsgSession)

	// One user asking in a loop gets at most maxGrantsPerUser tokens a
	// TTL on a node (which holds 1024 for everyone); another user's job
	// there still gets its session.
	other := tc.submitAs(mallory, "a", 1)
	n.expect(api.MsgStart)
	n.report(other, 0, api.RunRunning, 0)
	for i := 2; i < maxGrantsPerUser; i++ {
		if resp := callAs(tc.ctl, alice, api.Request{Op: api.OpSession, Session: &api.SessionSpec{Job: id}}); resp.Error != nil {
			t.Fatalf("grant %d: %v", i, resp.Error)
		}
		n.expect(api.MsgSession)
	}
	resp = callAs(tc.ctl, alice, api.Request{Op: api.OpSession, Session: &api.SessionSpec{Job: id}})
	if resp.Error == nil || resp.Error.Code != api.CodeInvalidState || !strings.Contains(resp.Error.Message, "retry in") {
		t.Fatalf("grant %d: %+v, want a refusal", maxGrantsPerUser+1, resp.Error)
	}
	if resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpSession, Session: &api.SessionSpec{Job: other}}); resp.Error != nil {
		t.Fatalf("another user's session after the flood: %v", resp.Error)
	}
}

// TestCheckInteractive: a partition's interactive rules at submit.
func TestCheckInteractive(t *testing.T) {
	p := &conf.Partition{Name: "gpu", Interactive: true, MaxInteractiveWalltime: time.Hour}
	off := &conf.Partition{Name: "cpu"}
	for _, tc := range []struct {
		name string
		part *conf.Partition
		job  api.Job
		code string
		wall time.Duration
	}{
		{"default walltime", p, api.Job{Interactive: true}, "", time.Hour},
		{"within the cap", p, api.Job{Interactive: true, Resources: api.Resources{Walltime: time.Minute}}, "", time.Minute},
		{"above the cap", p, api.Job{Interactive: true, Resources: api.Resources{Walltime: 2 * time.Hour}}, api.CodeBadRequest, 0},
		{"partition refuses", off, api.Job{Interactive: true}, api.CodeInvalidState, 0},
		{"array", p, api.Job{Interactive: true, ArrayIndices: indices("1-3")}, api.CodeBadRequest, 0},
		{"script", p, api.Job{Interactive: true, Script: "rm -rf /"}, api.CodeBadRequest, 0},
		{"batch job untouched", off, api.Job{}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.job
			e := checkInteractive(tc.part, &j)
			switch {
			case tc.code == "" && e != nil:
				t.Fatal(e)
			case tc.code != "" && (e == nil || e.Code != tc.code):
				t.Fatalf("error %+v, want %s", e, tc.code)
			case tc.code == "" && j.Resources.Walltime != tc.wall:
				t.Fatalf("walltime %v, want %v", j.Resources.Walltime, tc.wall)
			case tc.code == "" && j.Interactive && (j.Stdout != "/dev/null" || j.Stderr != "/dev/null"):
				t.Fatalf("output %q %q, want /dev/null", j.Stdout, j.Stderr)
			}
		})
	}
}
