//go:build !unit

package ctld

import (
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// A submission sent again with the same request id (its answer was lost)
// gets the job the first made, also from a controller restarted on the
// same spool (the id is spooled with the job); another user's same id, or
// no id, makes a new job; a malformed id is refused. Over the real TCP
// client port with MUNGE credentials, each try with its own credential as
// the client package sends them.
func TestSubmitRequestID(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares,
		"client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"")
	submit := func(uid uint32, request string) *api.Response {
		t.Helper()
		req := line(t, api.Request{V: api.Version, Op: api.OpSubmit, Submit: &api.SubmitSpec{RequestID: request, Job: api.JobSpec{
			Name: "r", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}}})
		cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, uid, api.RequestPayload(req), 300)})
		return remoteCall(t, addr, cred, req)
	}
	ok := func(r *api.Response) string {
		t.Helper()
		if r.Error != nil || r.JobID == "" {
			t.Fatalf("submit: %+v", r.Error)
		}
		return r.JobID
	}
	first := ok(submit(remoteUID, "4f1c0a"))
	if again := ok(submit(remoteUID, "4f1c0a")); again != first {
		t.Fatalf("the repeated request made job %s; the first made %s", again, first)
	}
	other := ok(submit(remoteUID+1, "4f1c0a"))
	plain1, plain2 := ok(submit(remoteUID, "")), ok(submit(remoteUID, ""))
	if other == first || plain1 == plain2 || plain1 == first {
		t.Fatalf("jobs %s (another user, same id), %s and %s (no id), %s (first)", other, plain1, plain2, first)
	}
	for _, bad := range []string{strings.Repeat("a", api.MaxRequestID+1), "a b", "é", "x\n"} {
		if r := submit(remoteUID, bad); r.Error == nil || r.Error.Code != api.CodeBadRequest || !strings.Contains(r.Error.Message, "request id") {
			t.Errorf("request id %q: %+v", bad, r.Error)
		}
	}
	tc.restart()
	if again := ok(submit(remoteUID, "4f1c0a")); again != first {
		t.Fatalf("after a restart the repeated request made job %s; the first made %s", again, first)
	}
	if r := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{}}); len(r.Jobs) != 4 {
		t.Fatalf("%d jobs, want 4", len(r.Jobs))
	}
}
