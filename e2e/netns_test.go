//go:build !unit

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// lab is a small network of hosts made of network namespaces: each host a
// namespace with its own loopback and one veth (eth0) on a bridge that
// lives in a namespace of its own, so nothing touches the machine's own
// network. Addresses are 10.77.0.N/24, assigned here; the namespaces are
// removed when the test ends (and stale ones of dead test processes at
// the next start).
type lab struct {
	t      testing.TB
	prefix string // "sqe2e-PID-"
	hosts  map[string]*labHost
}

// labHost is one host of a lab.
type labHost struct {
	Name string
	NS   string // the network namespace (/run/netns/NS)
	IP   string
}

const labNetns = "sqe2e-"

func newLab(t testing.TB, names ...string) *lab {
	t.Helper()
	sweepLabs()
	l := &lab{t: t, prefix: labNetns + strconv.Itoa(os.Getpid()) + "-", hosts: map[string]*labHost{}}
	sw := l.prefix + "sw"
	t.Cleanup(func() {
		for _, h := range l.hosts {
			exec.Command("ip", "netns", "delete", h.NS).Run()
		}
		exec.Command("ip", "netns", "delete", sw).Run()
	})
	l.ip("netns", "add", sw)
	l.ip("-n", sw, "link", "add", "br0", "type", "bridge")
	l.ip("-n", sw, "link", "set", "br0", "up")
	for i, name := range names {
		h := &labHost{Name: name, NS: l.prefix + name, IP: fmt.Sprintf("10.77.0.%d", i+1)}
		l.hosts[name] = h
		port := "p" + strconv.Itoa(i)
		l.ip("netns", "add", h.NS)
		l.ip("-n", h.NS, "link", "set", "lo", "up")
		l.ip("-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", h.NS)
		l.ip("-n", sw, "link", "set", port, "master", "br0", "up")
		l.ip("-n", h.NS, "addr", "add", h.IP+"/24", "dev", "eth0")
		l.ip("-n", h.NS, "link", "set", "eth0", "up")
	}
	return l
}

func (l *lab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// sweepLabs removes the namespaces of lab test processes that are gone.
func sweepLabs() {
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), labNetns)
		if !ok {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		if n, err := strconv.Atoi(pid); err == nil && syscall.Kill(n, 0) == syscall.ESRCH {
			exec.Command("ip", "netns", "delete", e.Name()).Run()
		}
	}
}

// inNetns runs fn on an OS thread that has joined the namespace ns:
// processes it starts and sockets it opens belong to that host. The thread
// is never handed back to the Go scheduler (it ends with its goroutine).
func inNetns(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread() // no Unlock: the thread must not run other goroutines
		f, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// start starts cmd on h.
func (h *labHost) start(cmd *exec.Cmd) error { return inNetns(h.NS, cmd.Start) }

// dial connects from h.
func (h *labHost) dial(addr string) (net.Conn, error) {
	var conn net.Conn
	err := inNetns(h.NS, func() error {
		var err error
		conn, err = net.Dial("tcp", addr)
		return err
	})
	return conn, err
}

// TestLab: hosts reach each other over the bridge and not the machine's
// own loopback listeners.
func TestLab(t *testing.T) {
	l := newLab(t, "a", "b")
	ln, err := net.Listen("tcp", "127.0.0.1:0") // the machine's, in the root namespace
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var bl net.Listener
	must(t, inNetns(l.hosts["b"].NS, func() error {
		var err error
		bl, err = net.Listen("tcp", l.hosts["b"].IP+":7000")
		return err
	}))
	defer bl.Close()
	go func() {
		if c, err := bl.Accept(); err == nil {
			c.Write([]byte("hi from b\n"))
			c.Close()
		}
	}()
	c, err := l.hosts["a"].dial(l.hosts["b"].IP + ":7000")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, _ := c.Read(buf)
	c.Close()
	if string(buf[:n]) != "hi from b\n" {
		t.Fatalf("read %q", buf[:n])
	}
	if c, err := l.hosts["a"].dial(ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("host a reached the machine's loopback")
	}
}
