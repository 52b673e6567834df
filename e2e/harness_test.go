//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/internal/munged"
	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime/containerd"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// Users the clients run as. They need no passwd entry.
const (
	alice = 1000
	bob   = 1001
)

var (
	binDir  string // built binaries
	ctrSock string // the private containerd
	gpuDevs []string
)

func TestMain(m *testing.M) {
	etcdtest.RunMemberFromEnv() // an etcd member process of the HA tests
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if sock := os.Getenv(rawClientEnv); sock != "" {
		return rawClient(sock) // hostile_test.go: a copy of this binary, run as a user
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: these tests must run as root (they start containerd and switch users)")
		return 1
	}
	top, err := os.MkdirTemp("", "sharq-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(top)
	os.Chmod(top, 0o755)
	binDir = filepath.Join(top, "bin")
	build := exec.Command("go", "build", "-o", binDir+"/", "github.com/sharq-hpc/sharq/cmd/...")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	build.Env = append(os.Environ(), "CGO_CFLAGS=-Wno-deprecated-declarations")
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build:", err)
		return 1
	}
	d, err := testenv.StartContainerd("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer d.Stop()
	ctrSock = d.Socket
	devDir := filepath.Join(top, "dev")
	if err := os.MkdirAll(devDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if gpuDevs, err = testenv.MakeFakeGPUs(devDir, 16); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: fake GPUs:", err)
		return 1
	}
	return m.Run()
}

// cluster is one controller and its node daemons, all real processes.
type cluster struct {
	t        testing.TB
	dir      string
	conf     string
	sock     string
	ctld     *exec.Cmd
	nodes    map[string]*exec.Cmd
	logs     *logBuffer
	workdir  string // alice's submit directory
	addr     string // the controller's node address
	ns       string // containerd namespace: runc state is host-wide, so one per cluster
	image    string
	munge    *munged.Daemon    // with spec.tcp
	server   string            // the TCP client port, with spec.tcp
	nodeCfg  map[string]string // node -> its own configuration (spec.nodeContainerd)
	fakeGPUs bool              // spec.fakeGPUs
}

// spec describes a cluster: nodes of 8 GPUs each, and [[share]] blocks.
type spec struct {
	nodes  []string
	shares string
	grace  string
	extra  string // appended to [cluster]
	part   string // appended to the [[partition]] block
	// image is the partition's default_image (default: the test
	// busybox image); "host" needs host_image = true in part.
	image string
	// nodeKeys are more keys of one node's [[node]] block, by node name.
	nodeKeys map[string]string
	// tcp gives the cluster a munged and a TCP client port
	// (client_listen): runTCP's commands use them.
	tcp bool
	// nodeContainerd runs a node's sharqd on another containerd (by
	// node name, its socket), through a configuration file of its own
	// that differs only in [runtime]'s containerd_socket.
	nodeContainerd map[string]string
	// runtime is appended to the [runtime] block.
	runtime string
	// fakeGPUs runs each sharqd with the fake GPU source
	// (--fake-gpu-state): its state file starts empty (every GPU idle
	// and healthy); setGPUs writes it.
	fakeGPUs bool
}

func newCluster(t testing.TB, s spec) *cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "sharq-c-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	c := &cluster{t: t, dir: dir, nodes: map[string]*exec.Cmd{}, logs: &logBuffer{}, fakeGPUs: s.fakeGPUs}
	c.sock = filepath.Join(dir, "sharq.sock")
	c.addr = freeAddr(t)
	c.ns = testenv.Namespace()
	c.image, err = testenv.BusyboxImage(context.Background(), ctrSock, c.ns)
	must(t, err)
	c.conf = filepath.Join(dir, "cluster.toml")
	c.workdir = filepath.Join(dir, "home", "alice")
	must(t, os.MkdirAll(c.workdir, 0o755))
	must(t, os.Chown(c.workdir, alice, alice))
	bobDir := filepath.Join(dir, "home", "bob")
	must(t, os.MkdirAll(bobDir, 0o755))
	must(t, os.Chown(bobDir, bob, bob))
	must(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("e2e-secret\n"), 0o600))
	if s.grace == "" {
		s.grace = "5s"
	}
	if s.tcp {
		key := filepath.Join(dir, "munge.key")
		must(t, munged.NewKey(key))
		c.munge, err = munged.Start(context.Background(), filepath.Join(dir, "munge"), key)
		must(t, err)
		t.Cleanup(c.munge.Stop)
		c.server = freeAddr(t)
		s.extra += fmt.Sprintf("\nclient_listen = %q\nmunge_socket = %q\n", c.server, c.munge.Socket)
	}
	must(t, os.WriteFile(c.conf, []byte(c.toml(s)), 0o644))
	c.nodeCfg = map[string]string{}
	for n, sock := range s.nodeContainerd {
		_, err := testenv.BusyboxImage(context.Background(), sock, c.ns)
		must(t, err)
		own := strings.Replace(c.toml(s), fmt.Sprintf("containerd_socket = %q", ctrSock), fmt.Sprintf("containerd_socket = %q", sock), 1)
		c.nodeCfg[n] = filepath.Join(dir, "cluster-"+n+".toml")
		must(t, os.WriteFile(c.nodeCfg[n], []byte(own), 0o644))
	}
	c.startCtld()
	for _, n := range s.nodes {
		if s.fakeGPUs {
			c.setGPUs(n, `{}`)
		}
		c.startNode(n)
	}
	c.waitNodes(len(s.nodes))
	t.Cleanup(c.close)
	return c
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// toml is the cluster's configuration. Its node_timeout is the time a
// node has to say hello to a restarted controller before its jobs are
// requeued, and the longest heartbeat gap: on a loaded 2-core CI machine a
// node's hello waits seconds on containerd (its list of containers waits
// behind a container being made), so 4 s requeued a job that ran on (no
// test waits for a silent node to be marked down).
func (c *cluster) toml(s spec) string {
	if s.image == "" {
		s.image = c.image
	}
	var b strings.Builder
	fmt.Fprintf(&b, `[cluster]
name = "e2e"
spool_dir = %q
socket = %q
listen = %q
controller = %q
secret_file = %q
heartbeat_interval = "1s"
node_timeout = "20s"
checkpoint_root = %q
%s
[runtime]
containerd_socket = %q
namespace = %q
%s

[[partition]]
name = "gpu"
nodes = %q
default_image = %q
preempt_grace = %q
max_walltime = "1h"
%s
`, filepath.Join(c.dir, "spool"), c.sock, c.addr, c.addr, filepath.Join(c.dir, "secret"), filepath.Join(c.dir, "ckpt"), s.extra,
		ctrSock, c.ns, s.runtime, strings.Join(s.nodes, ","), s.image, s.grace, s.part)
	for i, n := range s.nodes {
		devs := gpuDevs[(i%2)*8 : (i%2)*8+8]
		fmt.Fprintf(&b, "\n[[node]]\nnames = %q\ngpus = 8\ncpus = 4\nmemory = \"4gb\"\ngpu_devices = [%s]\nextra_devices = []\n%s\n",
			n, quoteAll(devs), s.nodeKeys[n])
	}
	b.WriteString(s.shares)
	return b.String()
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// logBuffer collects the daemons' logs, written from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logWriter prefixes a daemon's log lines and keeps them for failures.
type logWriter struct {
	prefix string
	buf    *logBuffer
}

func (w logWriter) Write(p []byte) (int, error) {
	w.buf.mu.Lock()
	defer w.buf.mu.Unlock()
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if line != "" {
			w.buf.buf.WriteString(w.prefix + line)
		}
	}
	return len(p), nil
}

func (c *cluster) daemon(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Stdout = logWriter{name + ": ", c.logs}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func (c *cluster) startCtld() {
	c.t.Helper()
	c.ctld = c.daemon("sharqctld", "--config", c.conf, "--log-level", "debug")
	must(c.t, c.ctld.Start())
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(c.sock); err == nil {
			if _, _, err := c.runAs(0, "qstat"); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("sharqctld did not come up\n%s", c.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cluster) startNode(name string) {
	c.t.Helper()
	cfg := c.conf
	if own := c.nodeCfg[name]; own != "" {
		cfg = own
	}
	args := []string{"--config", cfg, "--node", name, "--state-dir", filepath.Join(c.dir, "node-"+name), "--log-level", "debug"}
	if c.fakeGPUs {
		args = append(args, "--fake-gpu-state", c.gpuState(name))
	}
	cmd := c.daemon("sharqd", args...)
	must(c.t, cmd.Start())
	c.nodes[name] = cmd
}

// gpuState is the fake GPU state file of a node (spec.fakeGPUs).
func (c *cluster) gpuState(node string) string { return filepath.Join(c.dir, "gpus-"+node+".json") }

// setGPUs replaces a node's fake GPU state (runtime/gpu.FakeState) at
// once: sharqd reads it whole at its next sample or check.
func (c *cluster) setGPUs(node, state string) {
	c.t.Helper()
	tmp := c.gpuState(node) + ".new"
	must(c.t, os.WriteFile(tmp, []byte(state), 0o644))
	must(c.t, os.Rename(tmp, c.gpuState(node)))
}

// kill9 kills a daemon the hard way and reaps it.
func kill9(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

func (c *cluster) close() {
	for _, n := range c.nodes {
		kill9(n)
	}
	if c.ctld != nil {
		c.ctld.Process.Signal(syscall.SIGTERM)
		c.ctld.Wait()
	}
	c.cleanupContainers()
	if c.t.Failed() {
		c.t.Logf("daemon logs:\n%s", c.logs)
	}
	os.RemoveAll(c.dir)
}

// waitNodes waits until n nodes are up.
func (c *cluster) waitNodes(n int) {
	c.t.Helper()
	c.eventually(time.Minute, func() (bool, string) {
		out, _, err := c.runAs(0, "sharqctl", "show", "nodes")
		return err == nil && strings.Count(out, " up ") >= n, out
	})
}

func (c *cluster) eventually(d time.Duration, f func() (bool, string)) {
	c.t.Helper()
	eventually(c.t, d, c.logs, f)
}

// eventually polls f every 100 ms until it says true; past d the test fails
// with f's last word and the daemons' logs.
func eventually(t testing.TB, d time.Duration, logs *logBuffer, f func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, last := f()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v; last: %s\nlogs:\n%s", d, last, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runAs runs one of the client commands as uid (0 = root, the admin), in
// the user's submit directory.
func (c *cluster) runAs(uid int, name string, args ...string) (stdout, stderr string, err error) {
	return c.runWith(uid, []string{"SHARQ_SOCKET=" + c.sock}, name, args...)
}

// runTCP is runAs over the TCP client port with a MUNGE credential (a
// cluster made with spec.tcp), as from another host.
func (c *cluster) runTCP(uid int, name string, args ...string) (stdout, stderr string, err error) {
	return c.runWith(uid, []string{"SHARQ_SERVER=" + c.server, "SHARQ_MUNGE_SOCKET=" + c.munge.Socket}, name, args...)
}

// runWith runs a client command as uid with env added to its own.
func (c *cluster) runWith(uid int, env []string, name string, args ...string) (stdout, stderr string, err error) {
	dir := c.workdir
	if uid == bob {
		dir = filepath.Join(c.dir, "home", "bob")
	}
	return c.runEnvIn(uid, env, dir, name, args...)
}

// runIn is runAs in the directory dir.
func (c *cluster) runIn(uid int, dir, name string, args ...string) (stdout, stderr string, err error) {
	return c.runEnvIn(uid, []string{"SHARQ_SOCKET=" + c.sock}, dir, name, args...)
}

func (c *cluster) runEnvIn(uid int, env []string, dir, name string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + c.workdir, "LANG=C"}, env...)
	cmd.Dir = dir
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() { <-ctx.Done(); cmd.Process.Kill() }()
	err = cmd.Run()
	return o.String(), e.String(), err
}

// qsub submits as alice and returns the job id.
func (c *cluster) qsub(args ...string) string {
	c.t.Helper()
	out, errOut, err := c.runAs(alice, "qsub", args...)
	if err != nil {
		c.t.Fatalf("qsub %v: %v\n%s", args, err, errOut)
	}
	return strings.TrimSpace(out)
}

// script writes a job script into alice's directory.
func (c *cluster) script(name, body string) string {
	c.t.Helper()
	p := filepath.Join(c.workdir, name)
	must(c.t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
	must(c.t, os.Chown(p, alice, alice))
	return p
}

// field returns one attribute of qstat -f (PBS "name = value" lines).
func (c *cluster) field(id, name string) string {
	c.t.Helper()
	out, errOut, err := c.runAs(0, "qstat", "-f", "-x", id)
	if err != nil {
		c.t.Fatalf("qstat -f %s: %v %s", id, err, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if ok && strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func (c *cluster) state(id string) string { return c.field(id, "job_state") }

func (c *cluster) waitState(id, st string, d time.Duration) {
	c.t.Helper()
	c.eventually(d, func() (bool, string) {
		got := c.state(id)
		return got == st, id + " state " + got + " reason " + c.field(id, "comment")
	})
}

func (c *cluster) readFile(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.workdir, name))
	return string(b)
}

// cleanupContainers removes whatever containers the test left in containerd.
func (c *cluster) cleanupContainers() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name := range c.nodes {
		rt, err := containerd.NewContainerd(ctx, ctrSock, c.ns, containerd.WithNode(name))
		if err != nil {
			continue
		}
		tasks, _ := rt.List(ctx)
		for _, task := range tasks {
			if task.Running {
				rt.Stop(ctx, task.JobID, 0)
				rt.Wait(ctx, task.JobID)
			}
			rt.Remove(ctx, task.JobID)
		}
		rt.Close()
	}
}

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func (c *cluster) readConf() string {
	b, err := os.ReadFile(c.conf)
	must(c.t, err)
	return string(b)
}

func (c *cluster) writeConf(s string) { must(c.t, os.WriteFile(c.conf, []byte(s), 0o644)) }
