package ctld

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/client"
	"github.com/sharq-hpc/sharq/spool"
)

// testCluster is an in-process controller with a real spool, a real Unix
// socket and a real TCP node listener.
type testCluster struct {
	t      testing.TB
	dir    string
	conf   string
	sock   string
	listen string
	cancel context.CancelFunc
	done   chan error
	ctl    *Controller
	limits Limits // passed to New
	clock  testClock
	log    *slog.Logger // the controller's, when set before start
	// dialNode, when set, is how the next scripted node connects (a TLS
	// dialer with that node's certificate); unset: plain TCP.
	dialNode func() (net.Conn, error)
	// spool, when set before start, replaces the bbolt spool (Options.Spool).
	spool spool.Spool
}

// testWait bounds a test's wait for something that should happen: only a
// failing test waits it out, so it is generous, not a speed requirement
// (the suite runs at a load of 20 on 2 cores).
const testWait = 30 * time.Second

// testNodeTimeout is the harness's node_timeout: far longer than any test
// runs, so a loaded machine never loses a node that a test keeps using
// (its scripted nodes send no heartbeats of their own). Tests of node loss
// move the controller's clock past it (tc.advance), and nothing waits for
// real time to pass.
const testNodeTimeout = 10 * time.Minute

// testClock is the controller's clock in tests: the wall clock plus an
// offset that only grows, so a test can make time pass at once. With
// frozen set (before start) it is frozen plus the offset: only advance
// moves it.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
	frozen time.Time
}

func (k *testClock) now() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.frozen.IsZero() {
		return k.frozen.Add(k.offset)
	}
	return time.Now().Add(k.offset)
}

// advance moves the controller's clock d ahead and lets the controller see
// the time (its tick: silent nodes, begin times), as its ticker would.
func (tc *testCluster) advance(d time.Duration) {
	tc.t.Helper()
	tc.clock.mu.Lock()
	tc.clock.offset += d
	tc.clock.mu.Unlock()
	if err := tc.ctl.do(context.Background(), func() { tc.ctl.tick() }); err != nil {
		tc.t.Fatal(err)
	}
}

// heard waits until the controller has read a message from node name at
// or after since, on its clock.
func (tc *testCluster) heard(name string, since time.Time) {
	tc.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var seen time.Time
		if err := tc.ctl.do(context.Background(), func() {
			if n := tc.ctl.nodes[name]; n != nil {
				seen = n.lastSeen
			}
		}); err != nil {
			tc.t.Fatal(err)
		}
		if !seen.Before(since) {
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("node %s: nothing heard since %v (last %v)", name, since, seen)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const testSecret = "s3cret-for-tests"

// clusterTOML is a config with one partition of the given nodes ("n1:8",
// or with labels "n1:8:gpu_type=a100").
func clusterTOML(dir, listen string, nodes []string, shares string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `[cluster]
name = "t"
spool_dir = %q
socket = %q
listen = %q
secret_file = %q
heartbeat_interval = "1s"
node_timeout = %q
checkpoint_root = %q

[[partition]]
name = "gpu"
nodes = %q
default_image = "img"
preempt_grace = "7s"
max_walltime = "1h"
`, filepath.Join(dir, "spool"), filepath.Join(dir, "s.sock"), listen, filepath.Join(dir, "secret"),
		testNodeTimeout.String(), filepath.Join(dir, "ckpt"), nodeNames(nodes))
	for _, n := range nodes {
		name, gpus, _ := strings.Cut(n, ":")
		gpus, labels, _ := strings.Cut(gpus, ":")
		fmt.Fprintf(&b, "\n[[node]]\nnames = %q\ngpus = %s\n", name, gpus)
		if labels != "" { // "n1:8:gpu_type=a100,ib=hdr"
			var kv []string
			for _, l := range strings.Split(labels, ",") {
				k, v, _ := strings.Cut(l, "=")
				kv = append(kv, fmt.Sprintf("%s = %q", k, v))
			}
			fmt.Fprintf(&b, "labels = { %s }\n", strings.Join(kv, ", "))
		}
	}
	b.WriteString(shares)
	return b.String()
}

func nodeNames(nodes []string) string {
	var names []string
	for _, n := range nodes {
		name, _, _ := strings.Cut(n, ":")
		names = append(names, name)
	}
	return strings.Join(names, ",")
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func newTestCluster(t testing.TB, nodes []string, shares string) *testCluster {
	t.Helper()
	return newTestClusterWith(t, nodes, shares, "")
}

// newTestClusterWith adds clusterKeys to the [cluster] table.
func newTestClusterWith(t testing.TB, nodes []string, shares, clusterKeys string) *testCluster {
	t.Helper()
	return newTestClusterLimits(t, nodes, shares, clusterKeys, Limits{})
}

// newTestClusterLimits also sets the connection limits.
func newTestClusterLimits(t testing.TB, nodes []string, shares, clusterKeys string, limits Limits) *testCluster {
	t.Helper()
	tc := prepareTestCluster(t, nodes, shares, clusterKeys, limits)
	tc.start()
	t.Cleanup(tc.stop)
	return tc
}

// prepareTestCluster writes the configuration and starts nothing.
func prepareTestCluster(t testing.TB, nodes []string, shares, clusterKeys string, limits Limits) *testCluster {
	t.Helper()
	dir := t.TempDir()
	tc := &testCluster{t: t, dir: dir, listen: freeAddr(t), limits: limits}
	tc.sock = filepath.Join(dir, "s.sock")
	tc.conf = filepath.Join(dir, "cluster.toml")
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(clusterTOML(dir, tc.listen, nodes, shares), "[cluster]\n", "[cluster]\n"+clusterKeys+"\n", 1)
	if err := os.WriteFile(tc.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return tc
}

func (tc *testCluster) start() {
	tc.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if tc.log != nil {
		log = tc.log
	}
	log = slog.New(&failOnCoreRefusal{t: tc.t, next: log.Handler()})
	c, err := New(ctx, Options{ConfigPath: tc.conf, Logger: log, Limits: tc.limits, Now: tc.clock.now, Spool: tc.spool})
	if err != nil {
		cancel()
		tc.t.Fatalf("New: %v", err)
	}
	tc.ctl, tc.cancel, tc.done = c, cancel, make(chan error, 1)
	go func() { tc.done <- c.Run(ctx) }()
	deadline := time.Now().Add(testWait)
	for {
		if conn, err := net.Dial("unix", tc.sock); err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			tc.t.Fatal("controller socket never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop ends the controller (like a crash as far as the jobs in the spool are
// concerned: only the fair share usage is written on the way out, and
// nothing else).
func (tc *testCluster) stop() {
	if tc.cancel == nil {
		return
	}
	tc.cancel()
	if err := <-tc.done; err != nil {
		tc.t.Errorf("controller Run: %v", err)
	}
	tc.cancel = nil
}

func (tc *testCluster) restart() {
	tc.stop()
	tc.start()
}

// call sends one request as this process (root: an admin).
func (tc *testCluster) call(req api.Request) *api.Response {
	tc.t.Helper()
	conn, err := net.Dial("unix", tc.sock)
	if err != nil {
		tc.t.Fatal(err)
	}
	defer conn.Close()
	req.V = api.Version
	if err := api.Encode(conn, req); err != nil {
		tc.t.Fatal(err)
	}
	var resp api.Response
	if err := api.NewDecoderLimit(conn, 1<<30).Decode(&resp); err != nil {
		tc.t.Fatal(err)
	}
	return &resp
}

// submitAs submits a job; tests run as root, which may not submit jobs, so
// the controller's identity check is bypassed with a fixed identity.
func (tc *testCluster) submit(share string, gpus int, prio *int) string {
	tc.t.Helper()
	return tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: share, Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: gpus}}, Priority: prio})
}

func (tc *testCluster) submitSpec(spec *api.SubmitSpec) string {
	tc.t.Helper()
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	var jobID string
	var e *api.Error
	if err := tc.ctl.do(context.Background(), func() { jobID, e = tc.ctl.submit(id, spec) }); err != nil {
		tc.t.Fatal(err)
	}
	if e != nil {
		tc.t.Fatalf("submit: %v", e)
	}
	return jobID
}

func (tc *testCluster) job(id string) api.Job {
	tc.t.Helper()
	resp := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Full: true}})
	if resp.Error != nil || len(resp.Jobs) != 1 {
		tc.t.Fatalf("stat %s: %v %d", id, resp.Error, len(resp.Jobs))
	}
	return resp.Jobs[0]
}

// scriptedNode speaks the real node protocol over TCP, as sharqd does.
type scriptedNode struct {
	t    testing.TB
	name string
	conn net.Conn
	dec  *api.Decoder
	msgs chan api.NodeMsg
	wmu  sync.Mutex // one message written at a time
	// welcome is the controller's answer to the hello; acks get the
	// controller's heartbeats that acknowledge a message (Ack set), as
	// many as fit.
	welcome api.NodeMsg
	acks    chan api.NodeMsg
}

func (tc *testCluster) attachNode(name string, running ...api.RunningJob) *scriptedNode {
	tc.t.Helper()
	return tc.attachNodeWith(name, &api.Inventory{Source: "config", CPUs: 8}, running...)
}

func (tc *testCluster) attachNodeWith(name string, inv *api.Inventory, running ...api.RunningJob) *scriptedNode {
	tc.t.Helper()
	return tc.attachHello(api.NodeMsg{Node: name, Running: running, Inventory: inv})
}

// attachHello connects a scripted node that says hello with the given
// message (its type and secret filled in) and waits for the welcome.
func (tc *testCluster) attachHello(hello api.NodeMsg) *scriptedNode {
	tc.t.Helper()
	name := hello.Node
	dial := tc.dialNode
	if dial == nil {
		dial = func() (net.Conn, error) { return net.Dial("tcp", tc.listen) }
	}
	conn, err := dial()
	if err != nil {
		tc.t.Fatal(err)
	}
	n := &scriptedNode{t: tc.t, name: name, conn: conn, dec: api.NewDecoder(conn), msgs: make(chan api.NodeMsg, 100), acks: make(chan api.NodeMsg, 100)}
	tc.t.Cleanup(func() { conn.Close() })
	hello.Type, hello.Secret = api.MsgHello, testSecret
	n.send(hello)
	var w api.NodeMsg
	if err := n.dec.Decode(&w); err != nil || w.Type != api.MsgWelcome || w.Error != "" {
		tc.t.Fatalf("welcome: %v %+v", err, w)
	}
	n.welcome = w
	go func() {
		defer close(n.msgs)
		for {
			var m api.NodeMsg
			if err := n.dec.Decode(&m); err != nil {
				return
			}
			if m.Type == api.MsgHeartbeat {
				if m.Ack != 0 {
					select {
					case n.acks <- m:
					default:
					}
				}
				continue // the controller's keep-alive, every interval
			}
			n.msgs <- m
		}
	}()
	return n
}

func (n *scriptedNode) send(m api.NodeMsg) {
	n.t.Helper()
	m.V = api.NodeVersion
	n.wmu.Lock()
	defer n.wmu.Unlock()
	if err := api.Encode(n.conn, m); err != nil {
		n.t.Fatal(err)
	}
}

// heartbeats sends a heartbeat every interval until the test ends, as a
// node daemon does.
func (n *scriptedNode) heartbeats(interval time.Duration) {
	done := make(chan struct{})
	n.t.Cleanup(func() { close(done) })
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			n.wmu.Lock()
			err := api.Encode(n.conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgHeartbeat, Node: n.name})
			n.wmu.Unlock()
			if err != nil {
				return
			}
		}
	}()
}

// expect waits for the next message of type typ, skipping none.
func (n *scriptedNode) expect(typ api.NodeMsgType) api.NodeMsg {
	n.t.Helper()
	select {
	case m, ok := <-n.msgs:
		if !ok {
			n.t.Fatalf("node %s: connection closed, want %s", n.name, typ)
		}
		if m.Type != typ {
			n.t.Fatalf("node %s: got %s %+v, want %s", n.name, m.Type, m, typ)
		}
		return m
	case <-time.After(testWait):
		n.t.Fatalf("node %s: no %s message", n.name, typ)
	}
	return api.NodeMsg{}
}

// expect2 waits for the next message, of type a or b.
func (n *scriptedNode) expect2(a, b api.NodeMsgType) api.NodeMsg {
	n.t.Helper()
	select {
	case m, ok := <-n.msgs:
		if !ok {
			n.t.Fatalf("node %s: connection closed, want %s or %s", n.name, a, b)
		}
		if m.Type != a && m.Type != b {
			n.t.Fatalf("node %s: got %s %+v, want %s or %s", n.name, m.Type, m, a, b)
		}
		return m
	case <-time.After(testWait):
		n.t.Fatalf("node %s: no %s or %s message", n.name, a, b)
	}
	return api.NodeMsg{}
}

// quiet checks that no message arrives for a while.
func (n *scriptedNode) quiet(d time.Duration) {
	n.t.Helper()
	select {
	case m := <-n.msgs:
		n.t.Fatalf("node %s: unexpected %s %+v", n.name, m.Type, m)
	case <-time.After(d):
	}
}

func (n *scriptedNode) report(jobID string, run int, state api.RunState, status int) {
	n.send(api.NodeMsg{Type: api.MsgJobState, JobState: &api.JobStateMsg{JobID: jobID, Run: run, State: state, ExitStatus: status, Time: time.Now()}})
}

func (tc *testCluster) waitState(id string, st api.State) api.Job {
	tc.t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		j := tc.job(id)
		if j.State == st {
			return j
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("job %s: state %s (reason %q), want %s", id, j.State, j.Reason, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// failOnCoreRefusal fails the test on an Error record that says the core
// refused an event the controller's records said it would take
// (coreRefused): the controller and the core disagree. Every record goes
// on to next.
type failOnCoreRefusal struct {
	t     testing.TB
	next  slog.Handler
	attrs []slog.Attr
}

func (h *failOnCoreRefusal) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.next.Enabled(ctx, l)
}

func (h *failOnCoreRefusal) WithAttrs(as []slog.Attr) slog.Handler {
	return &failOnCoreRefusal{t: h.t, next: h.next.WithAttrs(as), attrs: append(slices.Clone(h.attrs), as...)}
}

func (h *failOnCoreRefusal) WithGroup(name string) slog.Handler {
	return &failOnCoreRefusal{t: h.t, next: h.next.WithGroup(name), attrs: h.attrs}
}

func (h *failOnCoreRefusal) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		refused := false
		var b strings.Builder
		b.WriteString(r.Message)
		each := func(a slog.Attr) bool {
			refused = refused || a.Key == coreRefusal
			b.WriteString(" " + a.String())
			return true
		}
		for _, a := range h.attrs {
			each(a)
		}
		r.Attrs(each)
		if refused {
			h.t.Errorf("the core refused what the controller did: %s", b.String())
		}
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// recordingTB is a testing.TB that keeps what would fail the test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

// TestFailOnCoreRefusal: the tests' log handler fails a test on a core
// refusal (with the attributes of a derived logger too), and on nothing
// else logged at Error.
func TestFailOnCoreRefusal(t *testing.T) {
	for _, tt := range []struct {
		name string
		log  func(c *Controller)
		fail bool
	}{
		{"core refusal", func(c *Controller) { c.coreRefused("exit", "job", "1.lab", "err", "refused") }, true},
		{"derived logger", func(c *Controller) { c.log.With(coreRefusal, true).Error("exit") }, true},
		{"other error", func(c *Controller) { c.log.Error("node unhealthy: no new jobs there", "node", "n1") }, false},
		{"refusal below error", func(c *Controller) { c.log.Warn("exit", coreRefusal, true) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			c := &Controller{log: slog.New(&failOnCoreRefusal{t: rec, next: slog.NewTextHandler(io.Discard, nil)})}
			tt.log(c)
			if got := len(rec.failed) > 0; got != tt.fail {
				t.Errorf("failed = %v (%q), want %v", got, rec.failed, tt.fail)
			}
		})
	}
}

// qstatAs runs the real qstat command line as who (nil: this process, root,
// over the socket).
func (tc *testCluster) qstatAs(who *Identity, args ...string) (string, int) {
	tc.t.Helper()
	var out, errb bytes.Buffer
	call := client.Caller(tc.sock)
	if who != nil {
		call = func(ctx context.Context, req api.Request) (*api.Response, error) {
			req.V = api.Version
			resp := tc.ctl.handle(ctx, *who, &req)
			if resp.Error != nil {
				return resp, resp.Error
			}
			return resp, nil
		}
	}
	sys := &cli.Sys{Stdout: &out, Stderr: &errb, Now: time.Now, Location: time.UTC, Call: call}
	code := cli.Qstat(context.Background(), append([]string{"qstat"}, args...), sys)
	if code != 0 && code != cli.ExitUsage {
		tc.t.Fatalf("qstat %v: exit %d: %s", args, code, errb.String())
	}
	return out.String(), code
}

// rows counts the table rows of job id (the short id qstat prints).
func rows(table, id string) int {
	n := 0
	short := strings.SplitN(id, ".", 2)[0] + "."
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], short) {
			n++
		}
	}
	return n
}

func (tc *testCluster) submitAs(who Identity, share string, gpus int) string {
	tc.t.Helper()
	return tc.submitHoldAs(who, share, gpus, "")
}

// submitHeld submits a job held by its owner (qsub -h), as alice: a job
// that stays pending.
func (tc *testCluster) submitHeld(share string, gpus int) string {
	tc.t.Helper()
	return tc.submitHoldAs(Identity{UID: 1000, GID: 1000, User: "alice"}, share, gpus, "u")
}

// spec is a one-node job of share in the test cluster.
func spec(share string, gpus int, hold string, deps ...api.Dep) *api.SubmitSpec {
	return &api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: share, Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: gpus}, Hold: hold, Deps: deps}}
}

func (tc *testCluster) submitHoldAs(who Identity, share string, gpus int, hold string) string {
	tc.t.Helper()
	spec := &api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: share, Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: gpus}, Hold: hold}}
	var id string
	var e *api.Error
	if err := tc.ctl.do(context.Background(), func() { id, e = tc.ctl.submit(who, spec) }); err != nil || e != nil {
		tc.t.Fatalf("submit as %s: %v %v", who.User, err, e)
	}
	return id
}
