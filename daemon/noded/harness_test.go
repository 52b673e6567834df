package noded_test

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// waitLimit bounds every wait of these tests, so a broken daemon fails a
// test instead of hanging it; nothing is asserted about durations.
const waitLimit = 90 * time.Second

// socket is the package's private containerd, started by TestMain.
var socket string

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	d, err := testenv.StartContainerd("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	socket = d.Socket
	code := m.Run()
	if err := d.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop containerd:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

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
	w := api.NodeMsg{V: api.Version, Type: api.MsgWelcome}
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
				api.Encode(p.conn, api.NodeMsg{V: api.Version, Type: api.MsgHeartbeat, Ack: p.lastAck, Lease: p.lease})
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
	m.V = api.Version
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
type env struct {
	socket string // containerd's
	dir    string
	ns     string
	image  string
	gpus   []string
	cfg    *conf.Config
	ctl    *ctl
}

const testSecret = "correct horse battery staple"

func newEnv(t *testing.T, nodes ...string) *env {
	t.Helper()
	return newEnvOn(t, socket, nodes...)
}

// newEnvOn is newEnv with the containerd at sock.
func newEnvOn(t *testing.T, sock string, nodes ...string) *env {
	t.Helper()
	if len(nodes) == 0 {
		nodes = []string{"n1"}
	}
	// The job's uid must reach its work directory: open up the temp dirs.
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	ns := testenv.Namespace()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	image, err := testenv.BusyboxImage(ctx, sock, ns)
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := testenv.MakeFakeGPUs(filepath.Join(dir, "dev"), 8)
	if err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte(testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &env{socket: sock, dir: dir, ns: ns, image: image, gpus: gpus, ctl: newCtl(t, testSecret, nil)}
	e.cfg = &conf.Config{
		File: filepath.Join(dir, "cluster.toml"),
		Cluster: conf.Cluster{
			Name: "t", Controller: e.ctl.addr(), SecretFile: secretFile,
			HeartbeatInterval: 100 * time.Millisecond, CheckpointRoot: filepath.Join(dir, "ckpt"),
		},
		Runtime: conf.Runtime{ContainerdSocket: sock, Namespace: ns},
	}
	for _, n := range nodes {
		e.cfg.Nodes = append(e.cfg.Nodes, conf.Node{
			Name: n, Partition: "p", GPUs: len(gpus), GPUDevices: gpus,
			ExtraDevices: []string{"/dev/null", filepath.Join(dir, "dev", "nvidiactl")},
		})
	}
	t.Cleanup(func() { e.cleanup(t) })
	return e
}

// cleanup removes the test's containers, so its namespace leaves nothing.
func (e *env) cleanup(t *testing.T) {
	for _, n := range e.cfg.Nodes {
		rt := e.runtime(t, n.Name)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		tasks, _ := rt.List(ctx)
		for _, task := range tasks {
			if task.Running {
				rt.Stop(ctx, task.JobID, 0)
				rt.Wait(ctx, task.JobID)
			}
			rt.Remove(ctx, task.JobID)
		}
		cancel()
	}
}

// runtime opens the node's containerd runtime, closed when the test ends.
func (e *env) runtime(t *testing.T, node string) runtime.Runtime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	rt, err := runtime.NewContainerd(ctx, e.socket, e.ns, runtime.WithNode(node), runtime.WithLazyDaemon()) // as sharqd's
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func (e *env) stateDir(node string) string { return filepath.Join(e.dir, "state", node) }

// daemon is a sharqd run in the test's process.
type daemon struct {
	cancel context.CancelFunc
	done   chan error
}

// run starts noded.Run for node; it is stopped when the test ends.
func (e *env) run(t *testing.T, node string, edit ...func(*noded.Options)) *daemon {
	t.Helper()
	o := noded.Options{
		Config: e.cfg, Node: node, Runtime: e.runtime(t, node), StateDir: e.stateDir(node),
		Logger: testLogger(t, node), Discover: noNVML,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
	}
	for _, f := range edit {
		f(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{cancel: cancel, done: make(chan error, 1)}
	go func() { d.done <- noded.Run(ctx, o) }()
	t.Cleanup(func() { d.stop(t) })
	return d
}

// stop cancels the daemon and returns Run's result.
func (d *daemon) stop(t *testing.T) error {
	d.cancel()
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(waitLimit):
		t.Fatal("sharqd did not stop")
		return nil
	}
}

// result waits for Run to return by itself.
func (d *daemon) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(waitLimit):
		t.Fatal("sharqd did not return")
		return nil
	}
}

// order is a start order for a script job of uid 1000 with its own work
// directory (owned by 1000) and joined output file.
func (e *env) order(t *testing.T, id, script string, gpus ...int) api.StartOrder {
	t.Helper()
	wd := filepath.Join(e.dir, "work", id)
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(wd, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(wd, "out")
	return api.StartOrder{
		Job: api.Job{
			ID: id, Name: "job-" + id, Owner: api.Owner{User: "alice", UID: 1000, GID: 1000},
			Share: "teamA", Partition: "p", Script: script, WorkDir: wd, Stdout: out, Stderr: out,
			Resources: api.Resources{Nodes: 1, GPUsPerNode: len(gpus)},
		},
		GPUs: gpus, Image: e.image, Grace: 2 * time.Second, NodeList: []string{"n1"},
	}
}

// workFile is a file of the job's work directory.
func (e *env) workFile(id, name string) string { return filepath.Join(e.dir, "work", id, name) }

// awaitFile waits until path exists (a job says it reached a point).
func awaitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

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
// noded.Run as a process of its own, which a test can kill -9.
const childEnv = "NODED_TEST_CHILD"

type childArgs struct {
	Config   *conf.Config
	Node     string
	StateDir string
}

func childMain() int {
	var a childArgs
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &a); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	ctx, cancel := signalContext()
	defer cancel()
	rt, err := runtime.NewContainerd(ctx, a.Config.Runtime.ContainerdSocket, a.Config.Runtime.Namespace, runtime.WithNode(a.Node))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	defer rt.Close()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	err = noded.Run(ctx, noded.Options{
		Config: a.Config, Node: a.Node, Runtime: rt, StateDir: a.StateDir, Logger: log, Discover: noNVML,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// child is a sharqd process.
type child struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// spawn starts a sharqd process for node; it is killed when the test ends.
func (e *env) spawn(t *testing.T, node string) *child {
	t.Helper()
	args, err := json.Marshal(childArgs{Config: e.cfg, Node: node, StateDir: e.stateDir(node)})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(e.dir, fmt.Sprintf("sharqd-%s-%d.log", node, time.Now().UnixNano()))
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(args))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		c.signal(syscall.SIGKILL)
		<-c.done
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("sharqd %s log:\n%s", node, b)
		}
	})
	return c
}

func (c *child) signal(sig syscall.Signal) {
	select {
	case <-c.done:
	default:
		c.cmd.Process.Signal(sig)
	}
}

// wait waits for the process to end and returns its exit code.
func (c *child) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-c.done:
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(waitLimit):
		t.Fatal("sharqd process did not end")
		return -1
	}
}

// taskOf finds the job's container in the runtime.
func taskOf(t *testing.T, rt runtime.Runtime, id string) (runtime.Task, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	tasks, err := rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tasks, func(x runtime.Task) bool { return x.JobID == id })
	if i < 0 {
		return runtime.Task{}, false
	}
	return tasks[i], true
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}
