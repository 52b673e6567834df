package ctld

import (
	"io"
	"net"
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
