//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/client"
	"github.com/sharq-hpc/sharq/internal/munged"
	"github.com/sharq-hpc/sharq/internal/testenv"
)

// staticBin holds the client commands built without cgo, as `make build`
// makes them (static by themselves): sharqd mounts them into job
// containers, whose busybox image has no C library.
var staticBin struct {
	once sync.Once
	dir  string
	err  error
}

func staticClients(t testing.TB) string {
	t.Helper()
	staticBin.once.Do(func() {
		staticBin.dir = filepath.Join(filepath.Dir(binDir), "static")
		args := []string{"build", "-o", staticBin.dir + "/"}
		for _, c := range []string{"qsub", "qstat", "qdel", "qhold", "qrls", "qalter", "qexec", "sharqctl"} {
			args = append(args, "github.com/sharq-hpc/sharq/cmd/"+c)
		}
		build := exec.Command("go", args...)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		if err != nil {
			staticBin.err = fmt.Errorf("static clients: %v: %s", err, out)
		}
	})
	if staticBin.err != nil {
		t.Fatal(staticBin.err)
	}
	return staticBin.dir
}

// mhCluster is a cluster of real hosts made of network namespaces: a
// controller host, two GPU-node hosts (each its own containerd, sharqd and
// fake GPUs), and a login host with only the client commands. Every host
// has its own munged (the same key) and its own configuration file, which
// differ only in the host's own paths.
type mhCluster struct {
	t       *testing.T
	dir     string
	lab     *lab
	key     string
	munge   map[string]*munged.Daemon // per host
	evil    *munged.Daemon            // on the login host, another key
	conf    map[string]string         // host -> its cluster.toml
	sock    string                    // the controller's Unix socket (on its host)
	ctld    *exec.Cmd
	nodes   map[string]*exec.Cmd
	logs    *logBuffer
	workdir string // alice's home, shared by every host (like NFS)
	bobdir  string
	server  string // the controller's client address
	// timing is the [cluster] keys of heartbeats, node_timeout and
	// job_lease.
	timing string
	// runtimes are the node hosts' containerd sockets and namespaces.
	runtimes map[string][2]string
}

// mhTiming is the cluster's usual timing: node_timeout well above any
// pause of a loaded machine.
const mhTiming = `heartbeat_interval = "1s"
node_timeout = "20s"
`

func newMHCluster(t *testing.T) *mhCluster {
	t.Helper()
	return newMHClusterTimed(t, mhTiming)
}

// newMHClusterTimed is newMHCluster with the given timing keys.
func newMHClusterTimed(t *testing.T, timing string) *mhCluster {
	t.Helper()
	static := staticClients(t)
	dir, err := os.MkdirTemp("", "sharq-mh-")
	must(t, err)
	must(t, os.Chmod(dir, 0o755))
	c := &mhCluster{t: t, dir: dir, munge: map[string]*munged.Daemon{}, conf: map[string]string{},
		nodes: map[string]*exec.Cmd{}, logs: &logBuffer{}, timing: timing}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.lab = newLab(t, "ctl", "n1", "n2", "login")
	ctl := c.lab.hosts["ctl"]
	c.server = ctl.IP + ":6818"
	c.sock = filepath.Join(dir, "ctl", "sharq.sock")
	c.workdir = filepath.Join(dir, "home", "alice")
	c.bobdir = filepath.Join(dir, "home", "bob")
	for d, uid := range map[string]int{c.workdir: alice, c.bobdir: bob} {
		must(t, os.MkdirAll(d, 0o755))
		must(t, os.Chown(d, uid, uid))
	}
	must(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("mh-secret\n"), 0o600))

	c.key = filepath.Join(dir, "munge.key")
	must(t, munged.NewKey(c.key))
	for _, h := range []string{"ctl", "n1", "n2", "login"} {
		d, err := munged.Start(context.Background(), filepath.Join(dir, "munge-"+h), c.key)
		must(t, err)
		t.Cleanup(d.Stop)
		c.munge[h] = d
	}
	evilKey := filepath.Join(dir, "evil.key")
	must(t, munged.NewKey(evilKey))
	c.evil, err = munged.Start(context.Background(), filepath.Join(dir, "munge-evil"), evilKey)
	must(t, err)
	t.Cleanup(c.evil.Stop)

	// Each node host runs its own containerd, in its namespace: a job
	// container shares its node's network (the shim's).
	runtimes := map[string][2]string{} // host -> socket, namespace
	c.runtimes = runtimes
	for _, h := range []string{"n1", "n2"} {
		var d *testenv.Daemon
		must(t, inNetns(c.lab.hosts[h].NS, func() error {
			var err error
			d, err = testenv.StartContainerd("")
			return err
		}))
		t.Cleanup(func() { d.Stop() })
		ns := testenv.Namespace()
		_, err := testenv.BusyboxImage(context.Background(), d.Socket, ns)
		must(t, err)
		runtimes[h] = [2]string{d.Socket, ns}
	}
	for _, h := range []string{"ctl", "n1", "n2", "login"} {
		rt := runtimes[h]
		if rt[0] == "" {
			rt = [2]string{filepath.Join(dir, "no-containerd.sock"), "sharq"}
		}
		sock := c.sock
		if h != "ctl" {
			sock = filepath.Join(dir, h, "sharq.sock") // no controller there
		}
		c.conf[h] = filepath.Join(dir, h+".toml")
		must(t, os.MkdirAll(filepath.Join(dir, h), 0o755))
		must(t, os.WriteFile(c.conf[h], []byte(c.toml(sock, c.munge[h].Socket, rt[0], rt[1], static)), 0o644))
	}
	t.Cleanup(c.close)
	c.startCtld()
	for _, n := range []string{"n1", "n2"} {
		c.startNode(n)
	}
	c.eventually(time.Minute, func() (bool, string) {
		resp, err := c.call(api.Request{Op: api.OpNodes})
		if err != nil {
			return false, err.Error()
		}
		up := 0
		for _, n := range resp.Nodes {
			if n.State == "up" {
				up++
			}
		}
		return up == 2, fmt.Sprintf("%+v", resp.Nodes)
	})
	return c
}

func (c *mhCluster) toml(sock, mungeSock, ctrSock, ns, clientBin string) string {
	ctl := c.lab.hosts["ctl"].IP
	return fmt.Sprintf(`[cluster]
name = "mh"
spool_dir = %q
socket = %q
listen = "%s:6820"
controller = "%s:6820"
client_listen = %q
munge_socket = %q
secret_file = %q
%scheckpoint_root = %q
`, filepath.Join(c.dir, "spool"), sock, ctl, ctl, c.server, mungeSock, filepath.Join(c.dir, "secret"), c.timing,
		filepath.Join(c.dir, "ckpt")) + twoNodeTOML(ctrSock, ns, clientBin)
}

// twoNodeTOML is the rest of a lab cluster's configuration after
// [cluster]: the runtime, partition gpu with nodes n1 and n2 of 8 fake
// GPUs each (gpuDevs), and one share "a" of all 16.
func twoNodeTOML(ctrSock, ns, clientBin string) string {
	return fmt.Sprintf(`
[runtime]
containerd_socket = %q
namespace = %q
client_bin_dir = %q

[[partition]]
name = "gpu"
nodes = "n1,n2"
default_image = %q
max_walltime = "1h"

[[node]]
names = "n1"
gpus = 8
cpus = 4
memory = "4gb"
gpu_devices = [%s]
extra_devices = []

[[node]]
names = "n2"
gpus = 8
cpus = 4
memory = "4gb"
gpu_devices = [%s]
extra_devices = []

[[share]]
name = "a"
partition = "gpu"
gpus = 16
users = ["*"]
`, ctrSock, ns, clientBin, testenv.BusyboxRef, quoteAll(gpuDevs[:8]), quoteAll(gpuDevs[8:16]))
}

func (c *mhCluster) daemon(host, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Stdout = logWriter{host + " " + name + ": ", c.logs}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(c.t, c.lab.hosts[host].start(cmd))
	return cmd
}

func (c *mhCluster) startCtld() {
	c.t.Helper()
	c.ctld = c.daemon("ctl", "sharqctld", "--config", c.conf["ctl"], "--log-level", "debug")
	c.eventually(time.Minute, func() (bool, string) {
		_, err := c.call(api.Request{Op: api.OpShares})
		return err == nil, fmt.Sprint(err)
	})
}

func (c *mhCluster) startNode(name string) {
	c.nodes[name] = c.daemon(name, "sharqd", "--config", c.conf[name], "--node", name,
		"--state-dir", filepath.Join(c.dir, name, "state"), "--log-level", "debug")
}

func (c *mhCluster) close() {
	for _, n := range c.nodes {
		kill9(n)
	}
	if c.ctld != nil {
		c.ctld.Process.Signal(syscall.SIGTERM)
		c.ctld.Wait()
	}
	if c.t.Failed() {
		c.t.Logf("daemon logs:\n%s", c.logs)
		for h, d := range c.munge {
			c.t.Logf("munged of %s:\n%s", h, d.Log())
		}
	}
}

// call asks the controller on its own host's socket, as root (the test
// looks; users act from the login host).
func (c *mhCluster) call(req api.Request) (*api.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Call(ctx, c.sock, req)
}

func (c *mhCluster) job(id string) api.Job {
	c.t.Helper()
	resp, err := c.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Finished: true, Full: true}})
	if err != nil || len(resp.Jobs) != 1 {
		c.t.Fatalf("stat %s: %v", id, err)
	}
	return resp.Jobs[0]
}

func (c *mhCluster) waitFinished(id string, d time.Duration) api.Job {
	c.t.Helper()
	var j api.Job
	c.eventually(d, func() (bool, string) {
		j = c.job(id)
		return j.State == api.StateFinished, fmt.Sprintf("%s %s %s", id, j.State, j.Reason)
	})
	return j
}

func (c *mhCluster) eventually(d time.Duration, f func() (bool, string)) {
	c.t.Helper()
	eventually(c.t, d, c.logs, f)
}

// login runs a client command on the login host as uid, in the user's
// home, with the login host's configuration and nothing else; extra adds
// variables.
func (c *mhCluster) login(uid int, extra []string, name string, args ...string) (stdout, stderr string, err error) {
	return c.loginIn(uid, extra, "", name, args...)
}

// loginIn is login with stdin.
func (c *mhCluster) loginIn(uid int, extra []string, stdin, name string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Stdin = strings.NewReader(stdin)
	home := c.workdir
	if uid == bob {
		home = c.bobdir
	}
	cmd.Env = append([]string{"SHARQ_CONF=" + c.conf["login"], "PATH=/usr/bin:/bin", "HOME=" + home, "LANG=C"}, extra...)
	cmd.Dir = home
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := c.lab.hosts["login"].start(cmd); err != nil {
		return "", "", err
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	return o.String(), e.String(), err
}

// qsub submits as alice from the login host.
func (c *mhCluster) qsub(args ...string) string {
	c.t.Helper()
	out, errOut, err := c.login(alice, nil, "qsub", args...)
	if err != nil {
		c.t.Fatalf("qsub %v from the login host: %v\n%s\nlogs:\n%s", args, err, errOut, c.logs)
	}
	return strings.TrimSpace(out)
}

func (c *mhCluster) script(name, body string) {
	c.t.Helper()
	p := filepath.Join(c.workdir, name)
	must(c.t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
	must(c.t, os.Chown(p, alice, alice))
}

func (c *mhCluster) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.workdir, name))
	return string(b)
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// raw sends a credential line and a request line from the login host as
// they are (what a hostile client could send) and returns the answer.
func (c *mhCluster) raw(credLine, reqLine []byte) *api.Response {
	c.t.Helper()
	conn, err := c.lab.hosts["login"].dial(c.server)
	must(c.t, err)
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	_, err = conn.Write(append(append([]byte{}, credLine...), reqLine...))
	must(c.t, err)
	var resp api.Response
	must(c.t, api.NewDecoderLimit(conn, 1<<30).ReadResponse(&resp))
	return &resp
}

// credentialLine is a Credential line from the login host's munged, made
// by a process of uid (the munge command), binding payload.
func (c *mhCluster) credentialLine(uid int, payload []byte) []byte {
	c.t.Helper()
	cmd := exec.Command("munge", "-S", c.munge["login"].Socket, "-s", string(payload))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	out, err := cmd.Output()
	must(c.t, err)
	var b bytes.Buffer
	must(c.t, api.Encode(&b, api.Credential{V: api.Version, Munge: strings.TrimSpace(string(out))}))
	return b.Bytes()
}

func seqOf(id string) string { s, _, _ := strings.Cut(id, "."); return s }

// TestMultiHost: a controller host, two GPU-node hosts and a login host,
// each a network namespace with its own munged; everything a user does
// happens on the login host.
func TestMultiHost(t *testing.T) {
	c := newMHCluster(t)

	t.Run("script, command, qstat, qdel", func(t *testing.T) {
		c.t = t
		c.script("hello.sh", "#PBS -N hello\n#PBS -j oe\necho \"hello from the job, submitted on $PBS_O_HOST in $PBS_O_WORKDIR\"\n")
		script := c.qsub("-q", "a", "hello.sh")
		cmd := c.qsub("-q", "a", "-N", "cmd", "-j", "oe", "--", "/bin/echo", "command ran")
		sleeper := c.qsub("-q", "a", "-N", "sleeper", "--", "/bin/sleep", "300")
		for _, id := range []string{script, cmd} {
			if j := c.waitFinished(id, 60*time.Second); j.ExitStatus == nil || *j.ExitStatus != 0 || j.Owner.UID != alice {
				t.Fatalf("%s: %+v", id, j)
			}
		}
		if out := c.read("hello.o" + seqOf(script)); !strings.Contains(out, "hello from the job, submitted on") || !strings.Contains(out, c.workdir) {
			t.Errorf("script output %q", out)
		}
		if out := c.read("cmd.o" + seqOf(cmd)); out != "command ran\n" {
			t.Errorf("command output %q", out)
		}
		c.eventually(30*time.Second, func() (bool, string) {
			j := c.job(sleeper)
			return j.State == api.StateRunning, string(j.State)
		})
		out, errOut, err := c.login(alice, nil, "qstat", "-a")
		if err != nil || !strings.Contains(out, seqOf(sleeper)) || !strings.Contains(out, " R ") {
			t.Errorf("qstat -a: %v %s\n%s", err, errOut, out)
		}
		out, errOut, err = c.login(alice, nil, "qstat", "-Q")
		share := false
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			share = share || len(f) > 2 && f[0] == "a" && strings.Contains(l, "gpu")
		}
		if err != nil || !share {
			t.Errorf("qstat -Q: %v %s\n%s", err, errOut, out)
		}
		if _, errOut, err := c.login(alice, nil, "qdel", sleeper); err != nil {
			t.Fatalf("qdel: %v %s", err, errOut)
		}
		c.waitFinished(sleeper, 30*time.Second)
	})

	t.Run("qsub -I and qexec from the login host", func(t *testing.T) {
		c.t = t
		// TCP with MUNGE to the controller, then straight to the node's
		// session port, with a MUNGE credential binding the token.
		out, errOut, err := c.loginIn(alice, nil, "echo on-$(hostname)-$PBS_JOBID; exit 6\n", "qsub", "-I", "-q", "a", "-l", "select=2:ngpus=1")
		if exitCode(err) != 6 || !strings.Contains(out, "on-") || !strings.Contains(errOut, "ready") {
			t.Fatalf("qsub -I from the login host: %v\nstdout %q\nstderr %q\nlogs:\n%s", err, out, errOut, c.logs)
		}
		if !strings.Contains(c.logs.String(), `msg="session started"`) || !strings.Contains(c.logs.String(), "munge=true") {
			t.Errorf("the node did not check a MUNGE credential for the session:\n%s", c.logs)
		}
		sleeper := c.qsub("-q", "a", "-l", "select=2:ngpus=1", "--", "/bin/sleep", "300")
		c.eventually(30*time.Second, func() (bool, string) {
			j := c.job(sleeper)
			return j.State == api.StateRunning, string(j.State)
		})
		j := c.job(sleeper)
		second := j.Allocs[1].Node
		out, errOut, err = c.loginIn(alice, nil, "", "qexec", "-n", second, sleeper, "--", "/bin/sh", "-c", "echo in-$PBS_JOBID; cat /proc/1/cmdline | tr '\\0' ' '")
		if err != nil || !strings.Contains(out, "in-"+sleeper) || !strings.Contains(out, "sleep 300") {
			t.Fatalf("qexec -n %s: %v\nstdout %q\nstderr %q", second, err, out, errOut)
		}
		if _, errOut, err := c.login(bob, nil, "qexec", sleeper); exitCode(err) != 159 {
			t.Errorf("bob's qexec into alice's job: %v %s", err, errOut)
		}
		c.login(alice, nil, "qdel", sleeper)
		c.waitFinished(sleeper, 30*time.Second)
	})

	t.Run("a 2-node job spans both node hosts", func(t *testing.T) {
		c.t = t
		id := c.qsub("-q", "a", "-N", "span", "-j", "oe", "-l", "select=2:ngpus=1", "--", "/bin/sh", "-c", "cat $PBS_NODEFILE; echo rank-ok")
		if j := c.waitFinished(id, 60*time.Second); j.ExitStatus == nil || *j.ExitStatus != 0 {
			t.Fatalf("%+v", j)
		}
		out := c.read("span.o" + seqOf(id))
		if strings.Count(out, "rank-ok") != 2 || !strings.Contains(out, "n1\nn2\n") {
			t.Fatalf("output %q: want both nodes in PBS_NODEFILE and a rank on each", out)
		}
	})

	t.Run("a job submits its own follow-up", func(t *testing.T) {
		c.t = t
		c.script("parent.sh", `#PBS -N parent
#PBS -j oe
child=$(qsub -q a -N child -j oe -W depend=afterok:$PBS_JOBID -- /bin/sh -c 'echo "child of '$PBS_JOBID' O_WORKDIR=$PBS_O_WORKDIR O_PATH=$PBS_O_PATH"') || exit 3
echo "child=$child"
sleep 2
echo "parent done"
`)
		parent := c.qsub("-q", "a", "parent.sh")
		pj := c.waitFinished(parent, 60*time.Second)
		out := c.read("parent.o" + seqOf(parent))
		if pj.ExitStatus == nil || *pj.ExitStatus != 0 {
			t.Fatalf("parent: exit %v, output %q", pj.ExitStatus, out)
		}
		child, ok := strings.CutPrefix(strings.Split(out, "\n")[0], "child=")
		if !ok || !strings.HasSuffix(child, ".mh") {
			t.Fatalf("parent output %q", out)
		}
		cj := c.waitFinished(child, 60*time.Second)
		if cj.ExitStatus == nil || *cj.ExitStatus != 0 || cj.Owner.UID != alice {
			t.Fatalf("child %+v", cj)
		}
		if cj.StartTime.Before(pj.EndTime) {
			t.Errorf("child started %v, before its parent ended %v", cj.StartTime, pj.EndTime)
		}
		cout := c.read("child.o" + seqOf(child))
		if !strings.Contains(cout, "child of "+parent) || !strings.Contains(cout, "O_WORKDIR="+c.workdir) || !strings.Contains(cout, "/run/sharq/bin") {
			t.Errorf("child output %q: want its PBS_O_* from the parent job", cout)
		}
	})

	t.Run("another user cannot touch the jobs", func(t *testing.T) {
		c.t = t
		id := c.qsub("-q", "a", "-h", "--", "/bin/true")
		for _, cmd := range [][]string{{"qdel", id}, {"qhold", id}, {"qrls", id}, {"qalter", "-N", "mine", id}} {
			_, errOut, err := c.login(bob, nil, cmd[0], cmd[1:]...)
			if exitCode(err) != 159 {
				t.Errorf("bob's %v: exit %d (%s), want 159", cmd, exitCode(err), errOut)
			}
			t.Logf("bob's %s: %s", cmd[0], strings.TrimSpace(errOut))
		}
		if j := c.job(id); j.State != api.StateHeld || j.Name == "mine" {
			t.Errorf("after bob: %s %q", j.State, j.Name)
		}
		if _, errOut, err := c.login(alice, nil, "qdel", id); err != nil {
			t.Fatalf("alice's qdel: %v %s", err, errOut)
		}
	})

	t.Run("refused credentials", func(t *testing.T) {
		c.t = t
		_, errOut, err := c.login(alice, []string{"SHARQ_MUNGE_SOCKET=" + c.evil.Socket}, "qsub", "-q", "a", "--", "/bin/true")
		if err == nil || !strings.Contains(errOut, "another munge key") {
			t.Errorf("credential of another key: %v %q", err, errOut)
		}
		t.Logf("another key: %s", strings.TrimSpace(errOut))

		var req bytes.Buffer
		must(t, api.Encode(&req, api.Request{V: api.Version, Op: api.OpShares}))
		cred := c.credentialLine(alice, api.RequestPayload(req.Bytes()))
		if resp := c.raw(cred, req.Bytes()); resp.Error != nil {
			t.Fatalf("first use: %v", resp.Error)
		}
		resp := c.raw(cred, req.Bytes())
		if resp.Error == nil || resp.Error.Code != api.CodeAuth || !strings.Contains(resp.Error.Message, "replayed") {
			t.Errorf("replayed: %+v", resp.Error)
		}
		t.Logf("replayed: %s", resp.Error.Message)

		var changed bytes.Buffer
		must(t, api.Encode(&changed, api.Request{V: api.Version, Op: api.OpDelete, IDs: []string{"1.mh"}}))
		resp = c.raw(c.credentialLine(alice, api.RequestPayload(req.Bytes())), changed.Bytes())
		if resp.Error == nil || resp.Error.Code != api.CodeAuth || !strings.Contains(resp.Error.Message, "another request") {
			t.Errorf("changed request: %+v", resp.Error)
		}
		t.Logf("changed request: %s", resp.Error.Message)
	})

	t.Run("kill -9 of the controller while the login host submits", func(t *testing.T) {
		c.t = t
		const want = 24
		var acked []string
		killed := false
		var restarted chan struct{}
		for attempt := 0; len(acked) < want && attempt < 400; attempt++ {
			out, _, err := c.login(alice, nil, "qsub", "-q", "a", "-N", "loop", "-o", "/dev/null", "-e", "/dev/null",
				"--", "/bin/sh", "-c", "echo $PBS_JOBID >> "+filepath.Join(c.workdir, "runs.log"))
			if err == nil {
				acked = append(acked, strings.TrimSpace(out))
			} else {
				time.Sleep(100 * time.Millisecond)
			}
			if !killed && len(acked) == want/3 {
				killed = true
				kill9(c.ctld)
				restarted = make(chan struct{})
				go func() {
					time.Sleep(500 * time.Millisecond)
					c.ctld = c.daemon("ctl", "sharqctld", "--config", c.conf["ctl"], "--log-level", "debug")
					close(restarted)
				}()
			}
		}
		if !killed {
			t.Fatal("the loop ended before the kill")
		}
		<-restarted
		if len(acked) < want {
			t.Fatalf("only %d of %d submissions acknowledged", len(acked), want)
		}
		for _, id := range acked {
			c.waitFinished(id, 90*time.Second)
		}
		runs := map[string]int{}
		for _, l := range strings.Fields(c.read("runs.log")) {
			runs[l]++
		}
		for _, id := range acked {
			if runs[id] != 1 {
				t.Errorf("acknowledged job %s ran %d times", id, runs[id])
			}
		}
		for id, n := range runs {
			if n > 1 {
				t.Errorf("job %s ran %d times", id, n)
			}
		}
	})

	t.Run("munged stopped on the login host", func(t *testing.T) {
		c.t = t
		c.munge["login"].Stop()
		_, errOut, err := c.login(alice, nil, "qsub", "-q", "a", "--", "/bin/true")
		if err == nil || !strings.Contains(errOut, "cannot get a MUNGE credential") || !strings.Contains(errOut, "is munged running on this host?") {
			t.Errorf("qsub without munged: %v %q", err, errOut)
		}
		t.Logf("without munged: %s", strings.TrimSpace(errOut))
	})
}
