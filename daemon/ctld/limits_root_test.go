//go:build !unit

package ctld

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestClientConnectionsCappedPerUID: one uid cannot hold more than its
// share of connections; the next is refused with a message, and a slot
// comes back when a connection closes.
func TestClientConnectionsCappedPerUID(t *testing.T) {
	tc := newTestClusterLimits(t, []string{"n1:8"}, twoShares, "", Limits{ConnsPerUser: 3})
	var held []net.Conn
	for len(held) < 3 {
		// Each holds a slot once it has an answer (the start-up probe
		// may still hold one for a moment: then retry).
		c, err := net.Dial("unix", tc.sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var resp api.Response
		api.Encode(c, api.Request{V: api.Version, Op: api.OpShares})
		if err := api.NewDecoder(c).Decode(&resp); err != nil || resp.Error != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		held = append(held, c)
	}
	waitHeld(t, func() int { return tc.ctl.limits.perUser.Held("0") }, 3)
	c, err := net.Dial("unix", tc.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The controller answers at once and closes: no request needed.
	var resp api.Response
	if err := api.NewDecoder(c).Decode(&resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error == nil || !strings.Contains(resp.Error.Message, "too many client connections of uid 0") {
		t.Fatalf("fourth connection: %+v", resp.Error)
	}
	held[0].Close()
	waitHeld(t, func() int { return tc.ctl.limits.perUser.Held("0") }, 2)
	if resp := rawCall(t, tc.sock, `{"v":1,"op":"shares"}`+"\n"); resp.Error != nil {
		t.Fatalf("after one closed: %v", resp.Error)
	}
}

// TestSilentConnectionsLockNobodyOut (N1): an attacker holding as many
// silent connections as the controller allows, on the node port and the
// TCP client port, from the node's own address or from many, with no
// timeout to free them, does not keep a node from saying hello nor another
// user from sending a request; the client port's connections take none of
// the node port's slots.
func TestSilentConnectionsLockNobodyOut(t *testing.T) {
	const perAddr, total = 4, 16
	tests := []struct {
		name  string
		addrs []string // where the attacker connects from
	}{
		{"one address", []string{"127.0.0.1"}},
		{"many addresses", []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := startMunged(t, "")
			addr := freeAddr(t)
			tc := newTestClusterLimits(t, []string{"n1:8"}, twoShares,
				"client_listen = \""+addr+"\"\nmunge_socket = \""+m.Socket+"\"",
				Limits{HelloPerAddr: perAddr, HelloPending: total, HelloTimeout: time.Hour,
					ClientPendingPerAddr: perAddr, ClientPending: total, ClientHelloTimeout: time.Hour})
			// The client port first: were its slots the node port's, no
			// node could say hello below.
			for _, from := range tt.addrs {
				for range perAddr + 2 {
					dialFrom(t, from, addr)
				}
			}
			want := min(perAddr*len(tt.addrs), total)
			waitHeld(t, tc.ctl.limits.client.Total, want)
			if got := tc.ctl.limits.hello.Total(); got != 0 {
				t.Fatalf("client connections hold %d node hello slots", got)
			}
			for _, from := range tt.addrs {
				for range perAddr + 2 {
					dialFrom(t, from, tc.listen)
				}
			}
			waitHeld(t, tc.ctl.limits.hello.Total, want)
			// A node from the attacker's own address says hello.
			n := tc.attachNode("n1")
			// Another user's request on the client port.
			req := submitLine(t, "victim")
			cred := line(t, api.Credential{V: api.Version, Munge: credentialAs(t, m.Socket, remoteUID, api.RequestPayload(req), 60)})
			if resp := remoteCall(t, addr, cred, req); resp.Error != nil {
				t.Fatalf("another user's request: %v", resp.Error)
			}
			if st := n.expect(api.MsgStart); st.Start.Job.Name != "victim" {
				t.Fatalf("start %+v", st.Start)
			}
		})
	}
}
