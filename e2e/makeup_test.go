//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/localcluster"
)

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// makeUp is one make up, started as a terminal starts it: in a process
// group of its own, its output collected.
type makeUp struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

func startMakeUp(t *testing.T, repo string) *makeUp {
	t.Helper()
	m := &makeUp{t: t, out: &lockedBuffer{}, done: make(chan struct{})}
	m.cmd = exec.Command("make", "up")
	m.cmd.Dir = repo
	m.cmd.Env = append(os.Environ(), "PATH=/usr/local/go/bin:"+os.Getenv("PATH"))
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, m.cmd.Start())
	go func() { m.cmd.Wait(); close(m.done) }()
	t.Cleanup(func() {
		if !m.interrupt() {
			t.Errorf("make up did not stop within 3m of SIGINT; killing it")
			m.kill()
		}
		if t.Failed() {
			t.Logf("make up output:\n%s", m.out)
			for _, name := range []string{"containerd", "munged", "sharqctld", "sharqd-node1"} {
				b, _ := os.ReadFile(filepath.Join(localcluster.DefaultStateDir, "log", name+".log"))
				t.Logf("%s.log:\n%s", name, lastLines(string(b), 40))
			}
		}
	})
	return m
}

func (m *makeUp) exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// interrupt is a terminal's ^C: SIGINT to the whole foreground group.
func (m *makeUp) interrupt() bool {
	if m.exited() {
		return true
	}
	syscall.Kill(-m.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-m.done:
		return true
	case <-time.After(3 * time.Minute):
		return false
	}
}

// kill is kill -9 of the whole group (make, its shell, sharq-up).
func (m *makeUp) kill() {
	syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	<-m.done
}

// waitUp waits until the socket answers and the node is up. make up
// builds first, which can take minutes on a busy CI machine.
func (m *makeUp) waitUp(run func(uid int, dir, name string, args ...string) (string, error)) {
	m.t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if m.exited() {
			m.t.Fatalf("make up exited before the cluster was up")
		}
		if nodes, err := run(0, "/", "sharqctl", "show", "nodes"); err == nil && strings.Contains(nodes, " up ") &&
			strings.Contains(m.out.String(), "is up") {
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the local cluster was not up within 10m")
		}
		time.Sleep(time.Second)
	}
}

// TestMakeUp is the newcomer's path: make up from the repository root (it
// builds, starts its own containerd and the daemons) with a job running,
// then kill -9 of the whole make up; a second make up cleans up after it
// and says what it found; README's tour runs as written; jobs submitted
// with qsub as the demo user run to completion; another make up is refused
// with a clear message; and ^C (SIGINT to make's process group, as a
// terminal sends it) stops everything: no daemon, container, shim, mount,
// socket, device file, secret or lock file is left, so that make test's
// own precondition holds after it. It uses none of TestMain's containerd.
func TestMakeUp(t *testing.T) {
	repo, err := filepath.Abs("..")
	must(t, err)
	cfg, err := conf.Load(filepath.Join(repo, "contrib", "examples", "local.toml"))
	must(t, err)
	sock := cfg.Cluster.Socket
	clients := filepath.Join(localcluster.DefaultStateDir, "bin")
	if live := liveMakeUp(); live != "" {
		t.Fatalf("a make up is running (%s): stop it first (Ctrl-C in its terminal)", live)
	}
	if leftovers := localLeftovers(t, cfg); len(leftovers) > 0 {
		t.Logf("an earlier make up that did not stop cleanly left (make up cleans it up):\n%s", strings.Join(leftovers, "\n"))
	}

	client := func(uid int, dir, name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(clients, name), args...)
		cmd.Env = []string{"SHARQ_SOCKET=" + sock, "PATH=/usr/bin:/bin", "LANG=C", "HOME=" + dir}
		cmd.Dir = dir
		if uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if err != nil {
			return o.String(), errors.New(err.Error() + ": " + e.String())
		}
		return o.String(), nil
	}
	field := func(id, name string) string {
		full, err := client(0, "/", "qstat", "-f", "-x", id)
		if err != nil {
			return "(" + err.Error() + ")"
		}
		for _, line := range strings.Split(full, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), " = "); ok && strings.EqualFold(k, name) {
				return v
			}
		}
		return ""
	}
	waitState := func(id, state string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for field(id, "job_state") != state {
			if time.Now().After(deadline) {
				full, _ := client(0, "/", "qstat", "-f", "-x", id)
				t.Fatalf("job %s not in state %s within 2m:\n%s", id, state, full)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	// A make up with a job running, killed with SIGKILL, make and all: its
	// daemons get their parent-death signal, its job's container and shim
	// live on, and every file it made stays.
	first := startMakeUp(t, repo)
	first.waitUp(client)
	u, err := user.Lookup(localcluster.DefaultUser)
	must(t, err)
	uid, _ := strconv.Atoi(u.Uid)
	work, err := os.MkdirTemp("", "sharq-makeup-")
	must(t, err)
	defer os.RemoveAll(work)
	must(t, os.Chmod(work, 0o755))
	must(t, os.Chown(work, uid, uid))
	orphan, err := client(uid, work, "qsub", "-q", "nlp", "-N", "orphan", "-j", "oe", "--", "/bin/sh", "-c", "echo running; exec sleep 600")
	if err != nil {
		t.Fatalf("qsub: %v", err)
	}
	orphan = strings.TrimSpace(orphan)
	oseq, _, _ := strings.Cut(orphan, ".")
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		// Running for real: its container wrote its output.
		if b, _ := os.ReadFile(filepath.Join(work, "orphan.o"+oseq)); string(b) == "running\n" {
			break
		}
		if time.Now().After(deadline) {
			full, _ := client(0, "/", "qstat", "-f", "-x", orphan)
			t.Fatalf("job %s did not start within 2m:\n%s", orphan, full)
		}
	}
	first.kill()
	killed := localLeftovers(t, cfg)
	if !slices.ContainsFunc(killed, func(s string) bool { return strings.Contains(s, "containerd-shim") }) {
		t.Errorf("after kill -9 of make up, no shim of the running job is left; the recovery below proves less:\n%s", strings.Join(killed, "\n"))
	}

	// make up again: it cleans up after the killed one, says so, and
	// starts an empty cluster.
	mk := startMakeUp(t, repo)
	mk.waitUp(client)
	for _, want := range []string{
		"A previous make up did not stop cleanly; cleaning up after it:",
		"  lock file " + localcluster.DefaultRunDir + "/sharq-up.lock of sharq-up pid",
		"  deleted 1 job container(s) still held by the earlier run's containerd",
		"  removed the node secret " + cfg.Cluster.SecretFile,
		"  removed fake GPUs ",
		"is up",
	} {
		if !strings.Contains(mk.out.String(), want) {
			t.Errorf("make up after kill -9: its output lacks %q:\n%s", want, mk.out)
		}
	}
	if jobs, err := client(0, "/", "qstat", "-x"); err != nil || strings.TrimSpace(jobs) != "" {
		t.Errorf("the new cluster is not empty: qstat -x: %q, %v", jobs, err)
	}
	for _, want := range []string{sock, "export SHARQ_SOCKET=", "qsub", "make demo"} {
		if !strings.Contains(mk.out.String(), want) {
			t.Errorf("make up's instructions lack %q:\n%s", want, mk.out)
		}
	}

	runTour(t, repo, clients, mk.out)

	// A second instance is refused, clearly, and changes nothing.
	second, err := exec.Command(filepath.Join(repo, "bin", "sharq-up"), "--repo", repo).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(string(second), "already up") {
		t.Errorf("second sharq-up: %v, want exit status 3 saying the cluster is already up:\n%s", err, second)
	}

	id, err := client(uid, work, "qsub", "-q", "vision", "-N", "hello", "-l", "ngpus=2",
		"--", "/bin/sh", "-c", "echo hello from $PBS_JOBID on GPUs $CUDA_VISIBLE_DEVICES")
	if err != nil {
		t.Fatalf("qsub: %v", err)
	}
	id = strings.TrimSpace(id)
	// A job still running at ^C: make up must remove its container.
	sleeper, err := client(uid, work, "qsub", "-q", "nlp", "-N", "sleeper", "-l", "ngpus=1", "--", "/bin/sleep", "600")
	if err != nil {
		t.Fatalf("qsub: %v", err)
	}
	sleeper = strings.TrimSpace(sleeper)
	waitState(id, "F")
	if st := field(id, "Exit_status"); st != "0" {
		t.Errorf("job %s exit status %q, want 0", id, st)
	}
	seq, _, _ := strings.Cut(id, ".")
	got, err := os.ReadFile(filepath.Join(work, "hello.o"+seq))
	if err != nil || !strings.HasPrefix(string(got), "hello from "+id+" on GPUs ") {
		t.Errorf("job output %q (%v), want hello from %s on GPUs ...", got, err, id)
	}

	// The host image: the machine's own files (Debian's, not busybox's),
	// HOME the user's home, writable through the /home mount.
	host, err := client(uid, work, "qsub", "-q", "nlp", "-N", "host", "-j", "oe", "--image", "host", "--", "/bin/sh", "-c",
		"cat /etc/debian_version >/dev/null && echo debian; echo home=$HOME; echo hi > $HOME/.sharq-host-test && cat $HOME/.sharq-host-test && rm $HOME/.sharq-host-test")
	if err != nil {
		t.Fatalf("qsub --image host: %v", err)
	}
	host = strings.TrimSpace(host)
	waitState(host, "F")
	hseq, _, _ := strings.Cut(host, ".")
	hout, _ := os.ReadFile(filepath.Join(work, "host.o"+hseq))
	if want := "debian\nhome=" + u.HomeDir + "\nhi\n"; string(hout) != want {
		t.Errorf("host-image job output %q, want %q", hout, want)
	}

	// A job submits its follow-up (over make up's TCP client port, with
	// its munged), which runs after it.
	parent, err := client(uid, work, "qsub", "-q", "vision", "-N", "parent", "-j", "oe", "--", "/bin/sh", "-c",
		"qsub -q vision -N child -j oe -W depend=afterok:$PBS_JOBID -- /bin/echo child ran")
	if err != nil {
		t.Fatalf("qsub: %v", err)
	}
	parent = strings.TrimSpace(parent)
	waitState(parent, "F")
	pseq, _, _ := strings.Cut(parent, ".")
	pout, _ := os.ReadFile(filepath.Join(work, "parent.o"+pseq))
	child := strings.TrimSpace(string(pout))
	if st := field(parent, "Exit_status"); st != "0" || !strings.HasSuffix(child, ".local") {
		t.Fatalf("parent %s: exit %q, output %q", parent, st, pout)
	}
	waitState(child, "F")
	cseq, _, _ := strings.Cut(child, ".")
	if cout, _ := os.ReadFile(filepath.Join(work, "child.o"+cseq)); string(cout) != "child ran\n" {
		t.Errorf("child output %q", cout)
	}
	waitState(sleeper, "R")

	// ^C, then nothing may be left.
	if !mk.interrupt() {
		t.Fatalf("make up did not stop within 3m of SIGINT")
	}
	if s := mk.out.String(); !strings.Contains(s, "Stopped: daemons ended") || strings.Contains(s, "with problems") {
		t.Errorf("make up did not report a clean stop:\n%s", lastLines(s, 20))
	}
	if leftovers := localLeftovers(t, cfg); len(leftovers) > 0 {
		t.Errorf("left behind after ^C:\n%s", strings.Join(leftovers, "\n"))
	}
}

// liveMakeUp names a running sharq-up ("" if none).
func liveMakeUp() string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && filepath.Base(strings.Split(string(b), "\x00")[0]) == "sharq-up" {
			return "sharq-up pid " + filepath.Base(filepath.Dir(p))
		}
	}
	return ""
}

// localLeftovers lists what of a local cluster exists: processes using its
// configuration or containerd socket (daemons, shims), the files a run
// makes (sockets, containerd's directory, the secret, fake GPUs, the lock
// file, the spool), mounts and runc state of the sharq namespace.
func localLeftovers(t *testing.T, cfg *conf.Config) []string {
	t.Helper()
	ctrSock := cfg.Runtime.ContainerdSocket
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		if strings.Contains(cmdline, "sharq-up") || strings.Contains(cmdline, "local.toml") ||
			strings.Contains(cmdline, ctrSock) || strings.Contains(cmdline, localcluster.DefaultStateDir+"/containerd") ||
			strings.Contains(cmdline, localcluster.DefaultRunDir+"/munge") {
			out = append(out, "process "+filepath.Base(filepath.Dir(p))+": "+cmdline)
		}
	}
	files := []string{cfg.Cluster.Socket, ctrSock, ctrSock + ".ttrpc", cfg.Cluster.SecretFile, cfg.Cluster.MungeSocket,
		cfg.Cluster.SpoolDir, filepath.Join(localcluster.DefaultStateDir, "containerd"),
		filepath.Join(localcluster.DefaultRunDir, "sharq-up.lock")}
	for _, n := range cfg.Nodes {
		files = append(files, n.GPUDevices...)
	}
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil {
			out = append(out, "file "+f)
		}
	}
	mounts, err := localcluster.MountsUnder(localcluster.DefaultRunDir, localcluster.DefaultStateDir)
	must(t, err)
	for _, m := range mounts {
		out = append(out, "mount "+m)
	}
	if ents, _ := os.ReadDir("/run/containerd/runc/sharq"); len(ents) > 0 {
		out = append(out, "runc state in /run/containerd/runc/sharq")
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
