//go:build !unit

package ctld

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestRemoteClients(t *testing.T) {
	m := startMunged(t, "")
	other := startMunged(t, "")
	addr := freeAddr(t)
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares,
		"client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"")
	credFor := func(sock string, uid uint32, req []byte, ttl int) []byte {
		return line(t, api.Credential{V: api.Version, Munge: credentialAs(t, sock, uid, api.RequestPayload(req), ttl)})
	}

	ok := submitLine(t, "ok")
	okCred := credFor(m.Socket, remoteUID, ok, 300)
	resp := remoteCall(t, addr, okCred, ok)
	if resp.Error != nil || resp.JobID == "" {
		t.Fatalf("submit: %+v", resp.Error)
	}
	j := tc.job(resp.JobID)
	if j.Owner.UID != remoteUID || j.Owner.GID != remoteUID || j.Owner.User != strconv.Itoa(remoteUID) {
		t.Errorf("owner %+v, want the credential's uid and gid", j.Owner)
	}

	changed := submitLine(t, "changed")
	expired := submitLine(t, "expired")
	expiredCred := credFor(m.Socket, remoteUID, expired, 1)
	time.Sleep(2100 * time.Millisecond)
	stat := line(t, api.Request{V: api.Version, Op: api.OpStat, Stat: &api.StatFilter{}})
	tests := []struct {
		name     string
		cred     []byte
		req      []byte
		code     string
		contains string
	}{
		{"replayed", okCred, ok, api.CodeAuth, "replayed"},
		{"other key", credFor(other.Socket, remoteUID, ok, 300), ok, api.CodeAuth, "another munge key"},
		{"request changed", credFor(m.Socket, remoteUID, ok, 300), changed, api.CodeAuth, "made for another request"},
		{"expired", expiredCred, expired, api.CodeAuth, "expired"},
		{"no credential", stat, stat, api.CodeAuth, "no MUNGE credential"},
		{"garbage credential", line(t, api.Credential{V: 1, Munge: "MUNGE:AAAA:"}), stat, api.CodeAuth, "malformed"},
		{"root", credFor(m.Socket, 0, stat, 300), stat, api.CodeAuth, "root is refused"},
		{"bad request json", credFor(m.Socket, remoteUID, []byte("{nope\n"), 300), []byte("{nope\n"), api.CodeBadRequest, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := remoteCall(t, addr, tt.cred, tt.req)
			if resp.Error == nil || resp.Error.Code != tt.code || !strings.Contains(resp.Error.Message, tt.contains) {
				t.Fatalf("error %+v, want %s containing %q", resp.Error, tt.code, tt.contains)
			}
		})
	}
	// Nothing refused was submitted, and the controller still serves.
	resp = remoteCall(t, addr, credFor(m.Socket, remoteUID, stat, 300), stat)
	if resp.Error != nil || len(resp.Jobs) != 1 || resp.Jobs[0].Name != "ok" {
		t.Fatalf("after the refusals: %+v %d jobs", resp.Error, len(resp.Jobs))
	}
}

// Two requests on one connection need two credentials.
func TestRemoteClientSecondRequest(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	newTestClusterWith(t, []string{"n1:8"}, twoShares, "client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"")
	stat := line(t, api.Request{V: api.Version, Op: api.OpShares})
	cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, remoteUID, api.RequestPayload(stat), 300)})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dec := api.NewDecoderLimit(conn, 1<<30)
	for i, want := range []string{"", api.CodeAuth} {
		conn.Write(append(append([]byte{}, cred...), stat...))
		var resp api.Response
		if err := dec.ReadResponse(&resp); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got := ""; resp.Error != nil {
			got = resp.Error.Code
			if got != want {
				t.Fatalf("request %d: %v, want %q", i, resp.Error, want)
			}
		} else if want != "" {
			t.Fatalf("request %d succeeded, want %s", i, want)
		}
	}
}

// The controller's munged is down: remote clients get a clear error, the
// Unix socket still serves.
func TestRemoteClientControllerMungedDown(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares, "client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"")
	stat := line(t, api.Request{V: api.Version, Op: api.OpShares})
	cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, remoteUID, api.RequestPayload(stat), 300)})
	m.Stop()
	resp := remoteCall(t, addr, cred, stat)
	if resp.Error == nil || resp.Error.Code != api.CodeInternal || !strings.Contains(resp.Error.Message, "munged") {
		t.Fatalf("error %+v", resp.Error)
	}
	if r := tc.call(api.Request{Op: api.OpShares}); r.Error != nil || len(r.Shares) != 2 {
		t.Fatalf("unix socket: %+v", r.Error)
	}
}

// A connection is one user's: a credential of another uid on it is refused.
func TestRemoteClientOneUserPerConnection(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	newTestClusterWith(t, []string{"n1:8"}, twoShares, "client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"")
	req := line(t, api.Request{V: api.Version, Op: api.OpShares})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dec := api.NewDecoderLimit(conn, 1<<30)
	for i, uid := range []uint32{remoteUID, remoteUID + 1} {
		cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, uid, api.RequestPayload(req), 300)})
		conn.Write(append(cred, req...))
		var resp api.Response
		if err := dec.ReadResponse(&resp); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if i == 0 && resp.Error != nil {
			t.Fatalf("first request: %v", resp.Error)
		}
		if i == 1 && (resp.Error == nil || resp.Error.Code != api.CodeAuth || !strings.Contains(resp.Error.Message, "one user")) {
			t.Fatalf("second uid on the connection: %+v", resp.Error)
		}
	}
}

// A controller that stops while it checks a remote credential (a paused
// leader woken past its TTL finds requests waiting on its port) answers
// CodeUnavailable, which sends the client to the next leader, not an
// error that ends the command (e2e TestHAProduction saw "the controller
// cannot reach its munged" from a qsub during a failover).
func TestRemoteIdentityControllerStopping(t *testing.T) {
	m := startMunged(t, "")
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares, "client_listen = \""+freeAddr(t)+"\"\nmunge_socket = \""+m.Socket+"\"")
	stat := line(t, api.Request{V: api.Version, Op: api.OpShares})
	cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, remoteUID, api.RequestPayload(stat), 300)})
	live, cancelLive := context.WithCancel(context.Background())
	defer cancelLive()
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		code string // "" = accepted
	}{
		{"stopping", stopped, api.CodeUnavailable},
		{"serving", live, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, aerr := tc.ctl.remoteIdentity(tt.ctx, cred, stat)
			switch {
			case tt.code == "" && (aerr != nil || id.UID != remoteUID):
				t.Fatalf("identity %+v, error %+v", id, aerr)
			case tt.code != "" && (aerr == nil || aerr.Code != tt.code):
				t.Fatalf("error %+v, want %s", aerr, tt.code)
			}
		})
	}
}
