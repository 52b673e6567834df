package ctld

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/api"
)

// dialAs connects to sock with uid as the connecting thread's effective
// user and group, so that the controller's SO_PEERCRED reads uid. Only
// that thread changes: it stays locked and ends with its goroutine.
func dialAs(t *testing.T, sock string, uid int) *net.UnixConn {
	t.Helper()
	for _, d := range []string{filepath.Dir(sock), filepath.Dir(filepath.Dir(sock))} {
		if err := os.Chmod(d, 0o755); err != nil { // the private test directories
			t.Fatal(err)
		}
	}
	type result struct {
		conn net.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
			ch <- result{err: e}
			return
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
			ch <- result{err: e}
			return
		}
		c, err := net.Dial("unix", sock)
		ch <- result{c, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("dial as %d: %v", uid, r.err)
	}
	t.Cleanup(func() { r.conn.Close() })
	r.conn.SetDeadline(time.Now().Add(testWait))
	return r.conn.(*net.UnixConn)
}

// TestSendReplyNeverBlocks: the loop's write of an answer to a client that
// reads nothing returns at once; the connection's goroutine writes the
// rest, and the client gets the answer whole once it reads.
func TestSendReplyNeverBlocks(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	server, client := conn(fds[0]), conn(fds[1])
	server.SetWriteBuffer(4096)
	client.SetReadBuffer(4096)
	// Fill the socket as a client that never reads lets answers pile up.
	fill := 0
	server.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	for {
		n, err := server.Write(bytes.Repeat([]byte("x"), 512))
		fill += n
		if err != nil {
			break
		}
	}
	server.SetWriteDeadline(time.Time{})
	o := &op{done: make(chan struct{}), reply: &reply{conn: server, resp: &api.Response{JobID: "7.t"}}}
	start := time.Now()
	sendReply(o)
	if d := time.Since(start); d > testWait/2 {
		t.Fatalf("sendReply waited %v for the client", d)
	}
	if !o.reply.written || len(o.reply.rest) == 0 {
		t.Fatalf("written %v, rest %d bytes: want the answer left to the goroutine", o.reply.written, len(o.reply.rest))
	}
	close(o.done)
	wrote := make(chan bool, 1)
	go func() { wrote <- awaitReply(t.Context(), o) }()
	got := make([]byte, fill)
	client.SetReadDeadline(time.Now().Add(testWait))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	var resp api.Response
	if err := api.NewDecoder(client).ReadResponse(&resp); err != nil || resp.JobID != "7.t" || resp.V != api.Version {
		t.Fatalf("answer after the fill: %+v %v", resp, err)
	}
	if !<-wrote {
		t.Fatal("awaitReply failed")
	}
}
