package noded_test

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// waitLimit bounds every wait of these tests, so a broken daemon fails a
// test instead of hanging it; nothing is asserted about durations.
const waitLimit = 90 * time.Second

// noNVML stands for a machine without NVIDIA's library, so the fake GPUs
// of the configuration are used even where a real GPU is present.
func noNVML(context.Context) ([]api.GPU, string, error) {
	return nil, "", fmt.Errorf("test: %w", gpu.ErrNoNVML)
}

// ctl is a scripted controller: a real TCP (or TLS) listener speaking the
// node protocol. It welcomes a hello carrying its secret, refuses others
// with "bad secret", and records everything a node sends.
type ctl struct {
	t        *testing.T
	ln       net.Listener
	secret   string
	peers    chan *peer
	mu       sync.Mutex
	conns    []net.Conn
	refusal  string          // welcome error for every hello while set
	code     api.RefusalCode // its code (RefusedOther when unset)
	refusals int
	changed  chan struct{}
	// lease, when set, is granted in the welcome, and each peer
	// acknowledges the node's heartbeats while it acks (peer.setAcking).
	lease time.Duration
}

func newCtl(t *testing.T, secret string, tc *tls.Config) *ctl {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	c := &ctl{t: t, ln: ln, secret: secret, peers: make(chan *peer, 16), changed: make(chan struct{})}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			c.conns = append(c.conns, nc)
			c.mu.Unlock()
			go c.handshake(nc)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, nc := range c.conns {
			nc.Close()
		}
	})
	return c
}

func (c *ctl) addr() string { return c.ln.Addr().String() }

func (c *ctl) handshake(nc net.Conn) {
	dec := api.NewDecoder(nc)
	var hello api.NodeMsg
	if err := dec.Decode(&hello); err != nil {
		nc.Close()
		return
	}
	w := api.NodeMsg{V: api.NodeVersion, Type: api.MsgWelcome}
	c.mu.Lock()
	lease := c.lease
	if lease > 0 {
		w.Ack, w.Lease = hello.Seq, lease
	}
	switch {
	case hello.Type != api.MsgHello || hello.Secret != c.secret:
		w.Error, w.Code = "bad secret", api.RefusedSecret
	case c.refusal != "":
		w.Error, w.Code = c.refusal, cmp.Or(c.code, api.RefusedOther)
	}
	if w.Error != "" {
		c.refusals++
		close(c.changed)
		c.changed = make(chan struct{})
	}
	c.mu.Unlock()
	if err := api.Encode(nc, w); err != nil || w.Error != "" {
		nc.Close()
		return
	}
	p := &peer{conn: nc, hello: hello, changed: make(chan struct{}), lease: lease, acking: lease > 0, lastAck: hello.Seq}
	go p.read(dec)
	c.peers <- p
}

// refuse makes the controller refuse every hello with why; "" ends it.
func (c *ctl) refuse(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refusal, c.code, c.refusals = why, "", 0
}

// refuseWith makes the controller refuse every hello with why and code.
func (c *ctl) refuseWith(code api.RefusalCode, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refusal, c.code, c.refusals = why, code, 0
}

// awaitRefusals waits until n hellos were refused since refuse.
func (c *ctl) awaitRefusals(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		c.mu.Lock()
		got, ch := c.refusals, c.changed
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d refusals, want %d", got, n)
		}
	}
}

// connections is how many connections the controller accepted.
func (c *ctl) connections() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

// accept waits for the next node connection.
func (c *ctl) accept(t *testing.T) *peer {
	t.Helper()
	select {
	case p := <-c.peers:
		return p
	case <-time.After(waitLimit):
		t.Fatal("no node connected")
		return nil
	}
}

// peer is one node connection as the controller sees it.
type peer struct {
	conn   net.Conn
	hello  api.NodeMsg
	mu     sync.Mutex
	states []api.JobStateMsg
	beats  int
	health string // of the last heartbeat
	// selfTests is the runtime self-tests passed, of the last heartbeat.
	selfTests uint64
	gpuFaults []api.GPUFault  // of the last heartbeat
	gpuUse    []api.JobGPUUse // of the last heartbeat
	closed    bool
	changed   chan struct{} // closed and replaced on every message
	lease     time.Duration // granted with every acknowledgement
	acking    bool          // heartbeats are acknowledged
	lastAck   uint64        // the last number acknowledged
}

// setAcking turns the acknowledgements of the node's heartbeats on or off
// (off: the controller's side of a link that lost the node's messages).
func (p *peer) setAcking(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acking = on
}

func (p *peer) read(dec *api.Decoder) {
	for {
		var m api.NodeMsg
		err := dec.Decode(&m)
		p.mu.Lock()
		switch {
		case err != nil:
			p.closed = true
		case m.Type == api.MsgHeartbeat:
			p.beats++
			p.health = m.Health
			p.selfTests = m.SelfTests
			p.gpuFaults = m.GPUFaults
			p.gpuUse = m.GPUUse
			if p.lease > 0 {
				// Not acking: the last number acknowledged again, as a
				// controller that no longer receives the node's messages.
				if p.acking {
					p.lastAck = m.Seq
				}
				api.Encode(p.conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgHeartbeat, Ack: p.lastAck, Lease: p.lease})
			}
		case m.Type == api.MsgJobState && m.JobState != nil:
			p.states = append(p.states, *m.JobState)
		}
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (p *peer) send(t *testing.T, m api.NodeMsg) {
	t.Helper()
	m.V = api.NodeVersion
	if err := api.Encode(p.conn, m); err != nil {
		t.Fatalf("send %s: %v", m.Type, err)
	}
}

func (p *peer) start(t *testing.T, o api.StartOrder) {
	t.Helper()
	p.send(t, api.NodeMsg{Type: api.MsgStart, Start: &o})
}

func (p *peer) stop(t *testing.T, id string, grace time.Duration, reason api.StopReason) {
	t.Helper()
	p.send(t, api.NodeMsg{Type: api.MsgStop, Stop: &api.StopOrder{JobID: id, Grace: grace, Reason: reason}})
}

func (p *peer) remove(t *testing.T, id string) {
	t.Helper()
	p.send(t, api.NodeMsg{Type: api.MsgRemove, Stop: &api.StopOrder{JobID: id}})
}

// await waits until cond holds of what the node sent.
func (p *peer) await(t *testing.T, what string, cond func(states []api.JobStateMsg, beats int, closed bool) bool) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		p.mu.Lock()
		ok := cond(p.states, p.beats, p.closed)
		ch := p.changed
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("waiting for %s: node sent %+v (closed %v)", what, p.states, p.closed)
		}
	}
}

// state waits for the job's report of state and returns it.
func (p *peer) state(t *testing.T, id, state string) api.JobStateMsg {
	t.Helper()
	var got api.JobStateMsg
	var failed *api.JobStateMsg
	p.await(t, id+" "+state, func(states []api.JobStateMsg, _ int, _ bool) bool {
		for _, s := range states {
			if s.JobID == id && string(s.State) == state {
				got = s
				return true
			}
			if s.JobID == id && s.State == "failed" {
				failed = &s
				return true
			}
		}
		return false
	})
	if failed != nil {
		t.Fatalf("waiting for %s %s: the start failed: %s", id, state, failed.Error)
	}
	return got
}

// reports returns every report of the job so far.
func (p *peer) reports(id string) []api.JobStateMsg {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []api.JobStateMsg
	for _, s := range p.states {
		if s.JobID == id {
			out = append(out, s)
		}
	}
	return out
}

// env is one test's cluster: a controller, a containerd namespace with the
// busybox image, 8 fake GPUs, a configuration and a secret file.
// testLogger sends a daemon's logs to the test's log.
func testLogger(t *testing.T, node string) *slog.Logger {
	return slog.New(slog.NewTextHandler(tLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test_node", node)
}

type tLog struct{ t *testing.T }

func (w tLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// The child sharqd: the test binary run again with childEnv set runs
