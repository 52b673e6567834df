//go:build !unit

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/internal/lograte"
)

// idleHolder is an attacker that holds as many silent TCP connections as
// it can: per of them from each of its addresses to one port, each
// dialled again a second after the server closes it (its deadline, or an
// eviction by a newer connection).
type idleHolder struct {
	mu      sync.Mutex
	conns   map[net.Conn]bool
	stopped bool
	opened  atomic.Int64
	stop    chan struct{}
	wg      sync.WaitGroup
}

func holdIdle(t *testing.T, target string, addrs []string, per int) *idleHolder {
	h := &idleHolder{conns: map[net.Conn]bool{}, stop: make(chan struct{})}
	for _, a := range addrs {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(a)}, Timeout: 2 * time.Second}
		for range per {
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				for {
					if conn, err := d.Dial("tcp", target); err == nil {
						h.mu.Lock()
						if h.stopped {
							h.mu.Unlock()
							conn.Close()
							return
						}
						h.conns[conn] = true
						h.mu.Unlock()
						h.opened.Add(1)
						conn.Read(make([]byte, 1)) // until the server (or stop) closes it
						h.mu.Lock()
						delete(h.conns, conn)
						h.mu.Unlock()
						conn.Close()
					}
					select {
					case <-h.stop:
						return
					case <-time.After(time.Second):
					}
				}
			}()
		}
	}
	t.Cleanup(h.close)
	return h
}

// held is how many connections the attacker holds now.
func (h *idleHolder) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

func (h *idleHolder) close() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.stopped = true
	close(h.stop)
	for conn := range h.conns {
		conn.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// attackerAddrs are 17 loopback addresses other than the daemons' own:
// 16 connections from each are more than the 256 (and one a configured
// node) a port keeps for connections that have not shown who they are.
func attackerAddrs() []string {
	var a []string
	for i := 2; i < 19; i++ {
		a = append(a, fmt.Sprintf("127.0.0.%d", i))
	}
	return a
}

// TestHostileConnections (issue 29, N1 N2 N3): an attacker holds as many
// idle connections as it can, from 17 addresses, on the controller's node
// port, its TCP client port and the node's session port. Meanwhile a node
// whose link broke (its sharqd killed and started again) says hello and
// is up again, bob's qsub over TCP with MUNGE works, and with bob holding
// as many live sessions in his own job as the node gives one user, alice's
// qexec into her job works.
func TestHostileConnections(t *testing.T) {
	sessionAddr := freeAddr(t)
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares, tcp: true,
		extra: fmt.Sprintf("session_listen = %q\n", sessionAddr)})
	// Each job says when its container runs: a daemon killed while it
	// is still being made would test a start, not a reconnection.
	sleeper := []string{"--", "/bin/sh", "-c", "echo up > up.$PBS_JOBID; exec sleep 300"}
	aliceJob := c.qsub(append([]string{"-q", "a"}, sleeper...)...)
	out, errOut, err := c.runAs(bob, "qsub", append([]string{"-q", "b"}, sleeper...)...)
	if err != nil {
		t.Fatalf("bob's qsub: %v %s", err, errOut)
	}
	bobJob := strings.TrimSpace(out)
	for _, f := range []string{filepath.Join(c.workdir, "up."+aliceJob), filepath.Join(c.dir, "home", "bob", "up."+bobJob)} {
		c.eventually(time.Minute, func() (bool, string) {
			_, err := os.Stat(f)
			return err == nil, fmt.Sprint(err)
		})
	}

	const per = 20 // more than the 16 slots an address gets
	attackStart := time.Now()
	attackers := map[string]*idleHolder{}
	for port, target := range map[string]string{"node": c.addr, "client": c.server, "session": sessionAddr} {
		attackers[port] = holdIdle(t, target, attackerAddrs(), per)
	}
	c.eventually(time.Minute, func() (bool, string) {
		var s []string
		done := true
		for port, h := range attackers {
			done = done && h.opened.Load() >= int64(len(attackerAddrs())*per)
			s = append(s, fmt.Sprintf("%s: %d opened, %d held", port, h.opened.Load(), h.held()))
		}
		return done, strings.Join(s, "; ")
	})
	for port, h := range attackers {
		t.Logf("attacker on the %s port: %d connections opened, %d held", port, h.opened.Load(), h.held())
	}
	// full waits until the attacker holds all it can on port: 16 from
	// each address on the controller's ports, 128 in all on the session
	// port.
	full := func(port string) {
		want := 16 * 16
		if port == "session" {
			want = 128
		}
		c.eventually(time.Minute, func() (bool, string) {
			return attackers[port].held() >= want, fmt.Sprintf("the attacker holds %d connections on the %s port", attackers[port].held(), port)
		})
	}

	// The node's link breaks (its sharqd killed and started again), then
	// the controller restarts while the node is down (every connection
	// dropped, the attacker's dialled again): each time n1 must be
	// welcomed again into a port the attacker fills.
	welcomed := func() int { return strings.Count(c.logs.String(), `msg="connected to the controller" node=n1`) }
	for _, blip := range []struct {
		name string
		do   func()
	}{
		{"N1 a node whose link broke reconnects", func() { kill9(c.nodes["n1"]); c.startNode("n1") }},
		{"N1 a node reconnects to a restarted controller", func() {
			kill9(c.nodes["n1"])
			kill9(c.ctld)
			c.startCtld()
			full("node")
			c.startNode("n1")
		}},
	} {
		t.Run(blip.name, func(t *testing.T) {
			full("node")
			before := welcomed()
			blip.do()
			c.eventually(time.Minute, func() (bool, string) {
				return welcomed() > before, fmt.Sprintf("n1 welcomed %d times, the node-port attacker holds %d", welcomed(), attackers["node"].held())
			})
			c.waitNodes(1)
			for _, id := range []string{aliceJob, bobJob} {
				if st := c.state(id); st != "R" {
					t.Errorf("job %s is %s after n1 reconnected, want R", id, st)
				}
			}
			t.Logf("n1 welcomed again with the attacker holding %d node-port connections", attackers["node"].held())
		})
	}

	t.Run("N1 another user's qsub over TCP", func(t *testing.T) {
		full("client")
		out, errOut, err := c.runTCP(bob, "qsub", "-q", "b", "-o", "/dev/null", "-e", "/dev/null", "--", "/bin/true")
		if err != nil {
			t.Fatalf("bob's qsub over TCP: %v %s", err, errOut)
		}
		id := strings.TrimSpace(out)
		c.waitState(id, "F", time.Minute)
		if st := c.field(id, "Exit_status"); st != "0" {
			t.Errorf("bob's job over TCP: exit status %q", st)
		}
		if out, errOut, err := c.runTCP(alice, "qstat", aliceJob); err != nil || !strings.Contains(out, seqOf(aliceJob)) {
			t.Errorf("alice's qstat over TCP: %v %s\n%s", err, errOut, out)
		}
		t.Logf("qsub and qstat over TCP with the attacker holding %d client-port connections", attackers["client"].held())
	})

	t.Run("N2 N3 alice's qexec beside idle connections and bob's sessions", func(t *testing.T) {
		const bobSessions = 64 // the most one user holds on a node
		var procs []*exec.Cmd
		defer func() {
			for _, p := range procs {
				p.Process.Kill()
				p.Wait()
			}
		}()
		started := func() int { return strings.Count(c.logs.String(), `msg="session started"`) }
		before := started()
		full("session")
		// In batches of 8 from the one address: 16 connections at once
		// from an address that have not shown their token yet are all
		// it gets, and a burst of 64 closes bob's own oldest ones.
		for i := range bobSessions {
			if i%8 == 0 {
				c.eventually(time.Minute, func() (bool, string) {
					return started()-before >= i, fmt.Sprintf("%d of bob's sessions started", started()-before)
				})
			}
			p := exec.Command(filepath.Join(binDir, "qexec"), bobJob, "--", "/bin/sleep", "300")
			p.Env = []string{"SHARQ_SOCKET=" + c.sock, "PATH=/usr/bin:/bin", "LANG=C"}
			p.Dir = filepath.Join(c.dir, "home", "bob")
			p.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: bob, Gid: bob}}
			must(t, p.Start())
			procs = append(procs, p)
		}
		c.eventually(2*time.Minute, func() (bool, string) {
			return started()-before >= bobSessions, fmt.Sprintf("%d of bob's sessions started", started()-before)
		})
		_, errOut, err := c.runAs(bob, "qexec", bobJob, "--", "/bin/true")
		t.Logf("bob's session %d: %v %s", bobSessions+1, err, strings.TrimSpace(errOut))
		full("session")
		out, errOut, err := c.runAs(alice, "qexec", aliceJob, "--", "/bin/sh", "-c", "echo in-$PBS_JOBID")
		if err != nil || strings.TrimSpace(out) != "in-"+aliceJob {
			t.Fatalf("alice's qexec with bob holding %d sessions and the attacker %d session-port connections: %v\nstdout %q\nstderr %q",
				bobSessions, attackers["session"].held(), err, out, errOut)
		}
		t.Logf("alice's qexec ran with bob holding %d sessions and the attacker %d session-port connections", bobSessions, attackers["session"].held())
	})

	// What the attacker made the daemons log is bounded: each eviction
	// message writes lograte.DefaultBurst lines a window in each daemon
	// process: the node and client ports' of 2 sharqctld processes, the
	// session port's of 3 sharqd processes.
	windows := int(time.Since(attackStart)/lograte.DefaultWindow) + 1
	evictions := strings.Count(c.logs.String(), "to make room")
	if most := (2*2 + 3) * lograte.DefaultBurst * windows; evictions > most {
		t.Errorf("%d eviction lines in %d windows of %v, want at most %d", evictions, windows, lograte.DefaultWindow, most)
	}
	var opened int64
	for _, h := range attackers {
		opened += h.opened.Load()
	}
	t.Logf("the attacker opened %d connections in %v; the daemons wrote %d eviction lines, %d lines in all",
		opened, time.Since(attackStart).Round(time.Millisecond), evictions, strings.Count(c.logs.String(), "\n"))
}
