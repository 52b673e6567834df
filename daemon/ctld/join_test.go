package ctld

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/spool"
)

// closeHook is a spool that runs hook when the controller closes it.
type closeHook struct {
	spool.Spool
	hook func()
}

func (c *closeHook) Close() error {
	c.hook()
	return c.Spool.Close()
}

// peerClosed says whether the other end of c has closed it, without
// waiting: non-blocking reads drain what is buffered and then read end of
// file or a reset (nil), or would block (an error). (A read with a deadline
// already passed would not even look.)
func peerClosed(c net.Conn) error {
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		return err
	}
	var rerr error
	buf := make([]byte, 64<<10)
	if err := rc.Control(func(fd uintptr) {
		for {
			n, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
			switch {
			case errors.Is(err, unix.ECONNRESET) || err == nil && n == 0:
				return
			case err != nil:
				rerr = fmt.Errorf("still open: %w", err)
				return
			}
		}
	}); err != nil {
		return err
	}
	return rerr
}

// TestConnectionsJoinedBeforeSpoolCloses: when Run closes the spool, every
// connection goroutine has returned and closed its connection: an idle
// client on the Unix socket (between two requests) and a node connection
// that has not said hello yet are both closed at that instant.
func TestConnectionsJoinedBeforeSpoolCloses(t *testing.T) {
	tc := prepareTestCluster(t, []string{"n1:8"}, twoShares, "", Limits{})
	// A configuration of 4 MiB (a comment): show config's answer fills any
	// socket buffer.
	f, err := os.OpenFile(tc.conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 << 10 {
		f.WriteString("#" + strings.Repeat("x", 1022) + "\n")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var conns map[string]net.Conn
	closed := make(chan struct{})
	tc.spool = &closeHook{Spool: spool.NewMemory(), hook: func() {
		defer close(closed)
		for what, c := range conns {
			if err := peerClosed(c); err != nil {
				t.Errorf("%s when the spool closes: %v (its goroutine still runs)", what, err)
			}
		}
	}}
	tc.start()
	t.Cleanup(tc.stop) // after a failure; a no-op after the stop below

	client, err := net.Dial("unix", tc.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// One request answered: the connection is accepted and served; its
	// goroutine now waits for the next one.
	if err := api.Encode(client, &api.Request{V: api.Version, Op: api.OpShares}); err != nil {
		t.Fatal(err)
	}
	var resp api.Response
	if err := api.NewDecoder(client).Decode(&resp); err != nil || resp.Error != nil {
		t.Fatalf("shares: %v %+v", err, resp.Error)
	}
	node, err := net.Dial("tcp", tc.listen)
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	// The node connection is served once the controller counts it.
	deadline := time.Now().Add(testWait)
	for tc.ctl.limits.hello.Total() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the node connection was never accepted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A client that asks for more than the socket buffers hold and never
	// reads it: its goroutine blocks in the write until the stop.
	deaf, err := net.Dial("unix", tc.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.Close()
	if err := api.Encode(deaf, &api.Request{V: api.Version, Op: api.OpConfig}); err != nil {
		t.Fatal(err)
	}
	// Its first byte: the answer is being written, and the rest cannot fit.
	if _, err := io.ReadFull(deaf, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	conns = map[string]net.Conn{"idle client": client, "node before its hello": node, "client that does not read": deaf}
	// The stop returns (a goroutine blocked on a write does not hold the
	// join up), and then every connection is closed (the hook).

	stopped := make(chan struct{})
	go func() { defer close(stopped); tc.stop() }()
	select {
	case <-stopped:
	case <-time.After(testWait):
		t.Fatal("Run did not return: a connection goroutine holds up the join")
	}
	<-closed
}
