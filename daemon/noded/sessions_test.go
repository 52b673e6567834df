package noded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/conns"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/session"
)

// fakeExec reaches a session's exec and fails it, with a text the test
// looks for: the session got past every limit.
type fakeExec struct{}

func (fakeExec) Exec(context.Context, string, runtime.ExecSpec) (runtime.Process, error) {
	return nil, errors.New("fake exec reached")
}

// sessionPort serves s on a loopback port for the test.
func sessionPort(t *testing.T, s *sessions) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); l.Close() })
	go s.serve(ctx, l)
	return l.Addr().String()
}

// dialSession connects to addr from the loopback address local.
func dialSession(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, local, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// firstFrame reads what the node answers c.
func firstFrame(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(time.Minute))
	f, err := session.ReadFrame(c)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	if f.Type != session.TypeRefused {
		t.Fatalf("frame %d %q", f.Type, f.Payload)
	}
	return string(f.Payload)
}

// TestSessionIdleConnectionsLockNobodyOut (N2): a host holding as many
// idle connections on the session port as it can, from one address or
// many, does not keep another user from their session: each new
// connection closes the oldest idle one, and a client that says hello at
// once gets through. Idle connections are closed after the hello wait.
func TestSessionIdleConnectionsLockNobodyOut(t *testing.T) {
	for _, addrs := range [][]string{{"127.0.0.1"}, {"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7", "127.0.0.8", "127.0.0.9"}} {
		t.Run(addrs[len(addrs)-1], func(t *testing.T) {
			sup := &supervisor{ctx: context.Background(), node: "n1", serial: newSerial(), jobs: map[string]*job{
				"2.t": {rec: jobRecord{Run: 1}, running: true}}}
			s := newSessions(sup, fakeExec{}, "", slog.New(slog.DiscardHandler))
			s.helloWait = time.Hour // only eviction frees a slot
			addr := sessionPort(t, s)
			for _, from := range addrs {
				for range maxPendingPerAddr + 2 {
					dialSession(t, from, addr)
				}
			}
			want := min(maxPendingPerAddr*len(addrs), maxPending)
			deadline := time.Now().Add(time.Minute)
			for s.pending.Total() != want {
				if time.Now().After(deadline) {
					t.Fatalf("%d idle connections held, want %d", s.pending.Total(), want)
				}
				time.Sleep(5 * time.Millisecond)
			}
			tok := strings.Repeat("v", session.TokenLen)
			s.grant(&api.SessionOrder{Token: tok, JobID: "2.t", Run: 1, UID: 2000, Expires: time.Now().Add(time.Minute)})
			victim := dialSession(t, "127.0.0.1", addr)
			session.NewWriter(victim).JSON(session.TypeHello, session.Hello{V: session.Version, Token: tok})
			if got := firstFrame(t, victim); !strings.Contains(got, "fake exec reached") {
				t.Fatalf("another user's session: %q", got)
			}
		})
	}
	t.Run("made-up tokens", func(t *testing.T) {
		// Hellos with tokens the controller never granted wait for them
		// (here for ever) without holding slots a newcomer cannot take.
		sup := &supervisor{ctx: context.Background(), node: "n1", serial: newSerial(), jobs: map[string]*job{
			"2.t": {rec: jobRecord{Run: 1}, running: true}}}
		s := newSessions(sup, fakeExec{}, "", slog.New(slog.DiscardHandler))
		s.helloWait, s.wait = time.Hour, time.Hour
		addr := sessionPort(t, s)
		fake := strings.Repeat("f", session.TokenLen)
		for i := range maxPending + 8 {
			c := dialSession(t, fmt.Sprintf("127.0.1.%d", 1+i%100), addr)
			session.NewWriter(c).JSON(session.TypeHello, session.Hello{V: session.Version, Token: fake})
		}
		deadline := time.Now().Add(time.Minute)
		for s.pending.Total() != maxPending {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections held, want %d", s.pending.Total(), maxPending)
			}
			time.Sleep(5 * time.Millisecond)
		}
		tok := strings.Repeat("v", session.TokenLen)
		s.grant(&api.SessionOrder{Token: tok, JobID: "2.t", Run: 1, UID: 2000, Expires: time.Now().Add(time.Minute)})
		victim := dialSession(t, "127.0.0.1", addr)
		session.NewWriter(victim).JSON(session.TypeHello, session.Hello{V: session.Version, Token: tok})
		if got := firstFrame(t, victim); !strings.Contains(got, "fake exec reached") {
			t.Fatalf("another user's session: %q", got)
		}
	})
	t.Run("hello wait", func(t *testing.T) {
		s := newSessions(nil, nil, "", slog.New(slog.DiscardHandler))
		s.helloWait = 100 * time.Millisecond
		c := dialSession(t, "127.0.0.1", sessionPort(t, s))
		if got := firstFrame(t, c); !strings.Contains(got, "the first frame must be a hello") {
			t.Fatalf("idle connection: %q", got)
		}
	})
}

// TestSessionsPerUser (N3): one user's sessions take at most
// maxSessionsPerUser of a node; the next is refused naming the limit (and
// logged), and another user's session still runs.
func TestSessionsPerUser(t *testing.T) {
	sup := &supervisor{ctx: context.Background(), node: "n1", serial: newSerial(), jobs: map[string]*job{
		"2.t": {rec: jobRecord{Run: 1}, running: true}}}
	var logged strings.Builder
	var mu sync.Mutex
	s := newSessions(sup, fakeExec{}, "", slog.New(slog.NewTextHandler(lockedWriter{&mu, &logged}, nil)))
	s.perUser = conns.NewLimiter("sessions of uid", 3)
	addr := sessionPort(t, s)
	n := 0
	hello := func(uid uint32, job string) net.Conn {
		n++
		tok := fmt.Sprintf("%0*d", session.TokenLen, n)
		s.grant(&api.SessionOrder{Token: tok, JobID: job, Run: 1, UID: uid, Expires: time.Now().Add(time.Minute)})
		c := dialSession(t, "127.0.0.1", addr)
		session.NewWriter(c).JSON(session.TypeHello, session.Hello{V: session.Version, Token: tok})
		return c
	}
	// Job 1.t never starts: its sessions wait for it, holding their slots.
	for range 3 {
		hello(1000, "1.t")
	}
	deadline := time.Now().Add(time.Minute)
	for s.perUser.Held("1000") != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of uid 1000 held, want 3", s.perUser.Held("1000"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := firstFrame(t, hello(1000, "1.t")); !strings.Contains(got, "too many sessions of uid 1000 (at most 3 at once)") || !strings.Contains(got, "n1") {
		t.Fatalf("uid 1000's fourth session: %q", got)
	}
	if got := firstFrame(t, hello(2000, "2.t")); !strings.Contains(got, "fake exec reached") {
		t.Fatalf("another user's session: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "too many sessions of uid 1000") {
		t.Fatalf("the refusal is not in the node's log:\n%s", logged.String())
	}
}

// lockedWriter serialises a log's writes.
type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
