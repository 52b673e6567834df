//go:build !unit

package noded_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

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
	rt, err := containerd.NewContainerd(ctx, e.socket, e.ns, containerd.WithNode(node), containerd.WithLazyDaemon()) // as sharqd's
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
		Job: api.RunSpec{
			ID: id, Name: "job-" + id, Owner: api.Owner{User: "alice", UID: 1000, GID: 1000},
			Share: "teamA", Script: script, WorkDir: wd, Stdout: out, Stderr: out,
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
	rt, err := containerd.NewContainerd(ctx, a.Config.Runtime.ContainerdSocket, a.Config.Runtime.Namespace, containerd.WithNode(a.Node))
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
