//go:build !unit

package ctld

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestOversizeMessages: on every port a message one byte over its bound is
// refused after that many bytes, with an answer naming the bound where the
// port answers (clients), and the controller goes on serving the others:
// a client on the socket, one on the TCP port, and a node that attaches
// and runs a job.
func TestOversizeMessages(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares,
		"client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"")
	// n+1 bytes and the newline: the port reads all of it before it
	// refuses, so that its close sends no reset ahead of its answer.
	over := func(n int) []byte { return append(bytes.Repeat([]byte{'x'}, n+1), '\n') }
	smallCred := line(t, api.Credential{V: api.Version, Munge: "MUNGE:AAAA:"})
	tests := []struct {
		name    string
		network string
		addr    string
		send    []byte
		answer  bool // the port answers clients; a node port closes
	}{
		{"unix socket request", "unix", tc.sock, over(api.MaxMessage), true},
		{"tcp credential line", "tcp", addr, over(api.MaxCredentialLine), true},
		{"tcp request line", "tcp", addr, append(smallCred, over(api.MaxMessage)...), true},
		{"node hello", "tcp", tc.listen, over(api.MaxMessage), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial(tt.network, tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(testWait))
			if _, err := conn.Write(tt.send); err != nil {
				t.Fatal(err)
			}
			var resp api.Response
			err = api.NewDecoder(conn).Decode(&resp)
			if !tt.answer {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("node port answered %+v (%v), want it closed", resp, err)
				}
				return
			}
			if err != nil || resp.Error == nil || resp.Error.Code != api.CodeBadRequest || !strings.Contains(resp.Error.Message, api.ErrTooLarge.Error()) {
				t.Fatalf("answer %+v (%v), want %s naming %q", resp.Error, err, api.CodeBadRequest, api.ErrTooLarge)
			}
		})
	}
	if resp := tc.call(api.Request{Op: api.OpShares}); resp.Error != nil || len(resp.Shares) != 2 {
		t.Fatalf("socket after the refusals: %+v", resp.Error)
	}
	stat := line(t, api.Request{V: api.Version, Op: api.OpStat, Stat: &api.StatFilter{}})
	cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, remoteUID, api.RequestPayload(stat), 300)})
	if resp := remoteCall(t, addr, cred, stat); resp.Error != nil {
		t.Fatalf("TCP port after the refusals: %+v", resp.Error)
	}
	n := tc.attachNode("n1")
	id := tc.submit("a", 1, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != id {
		t.Fatalf("node after the refusals got %+v, want %s", st, id)
	}
}
