package ctld

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func waitHeld(t *testing.T, held func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for held() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d slots held, want %d", held(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

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

// TestNodeConnectionsWithoutHello: connections that do not say hello are
// closed after the hello timeout, and do not keep a real node out once
// they are gone.
func TestNodeConnectionsWithoutHello(t *testing.T) {
	tc := newTestClusterLimits(t, []string{"n1:8"}, twoShares, "", Limits{HelloPerAddr: 2, HelloTimeout: 200 * time.Millisecond})
	held := func() int { return tc.ctl.limits.hello.Held("127.0.0.1") }
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", tc.listen)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(testWait))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Fatalf("idle connection after the hello timeout: read %v, want EOF", err)
		}
	}
	waitHeld(t, held, 0)
	n := tc.attachNode("n1")
	id := tc.submit("a", 1, nil)
	if m := n.expect(api.MsgStart); m.Start.Job.ID != id {
		t.Fatalf("start %+v", m.Start)
	}
}

// TestClientConnectionWithoutCredentialClosed: a TCP client connection
// that sends nothing is closed after ClientHelloTimeout, and gives its slot
// back.
func TestClientConnectionWithoutCredentialClosed(t *testing.T) {
	addr := freeAddr(t)
	tc := newTestClusterLimits(t, []string{"n1:8"}, twoShares, "client_listen = \""+addr+"\"",
		Limits{ClientHelloTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(testWait))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("silent client connection: read %v, want EOF", err)
	}
	waitHeld(t, func() int { return tc.ctl.limits.client.Total() }, 0)
}

// dialFrom connects to addr from the loopback address local.
func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: testWait}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, local, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
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

// The default cap on node connections without a hello leaves a slot for
// every configured node (all of them say hello at once after a restart or
// a failover) and 256 to spare; a cap that is set stays as set.
func TestHelloPendingDefault(t *testing.T) {
	tests := []struct {
		set, nodes, want int
	}{
		{0, 0, 256},
		{0, 1000, 1256},
		{0, 10_000, 10_256},
		{64, 1000, 64},
	}
	for _, tt := range tests {
		if got := (Limits{HelloPending: tt.set}).forNodes(tt.nodes).withDefaults().HelloPending; got != tt.want {
			t.Errorf("HelloPending %d with %d nodes: %d, want %d", tt.set, tt.nodes, got, tt.want)
		}
	}
	tc := newTestCluster(t, []string{"n1:8", "n2:8", "n3:8"}, twoShares)
	if got := tc.ctl.limits.HelloPending; got != 259 {
		t.Fatalf("a controller of 3 nodes allows %d connections without hello, want 259", got)
	}
}
