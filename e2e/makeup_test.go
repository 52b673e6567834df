package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
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

// TestMakeUp is the newcomer's path: make up from the repository root (it
// builds, starts its own containerd and the daemons), a job submitted with
// qsub as the demo user runs to completion, a second make up is refused
// with a clear message, and ^C (SIGINT to make's process group, as a
// terminal sends it) stops everything: no daemon, container, shim, mount or
// socket is left. It uses none of TestMain's containerd.
func TestMakeUp(t *testing.T) {
	repo, err := filepath.Abs("..")
	must(t, err)
	cfg, err := conf.Load(filepath.Join(repo, "contrib", "examples", "local.toml"))
	must(t, err)
	sock, ctrSock := cfg.Cluster.Socket, cfg.Runtime.ContainerdSocket
	clients := filepath.Join(localcluster.DefaultStateDir, "bin")
	if leftovers := localLeftovers(t, sock, ctrSock); len(leftovers) > 0 {
		t.Fatalf("a local cluster is already up or left over before the test (stop it first):\n%s", strings.Join(leftovers, "\n"))
	}

	out := &lockedBuffer{}
	mk := exec.Command("make", "up")
	mk.Dir = repo
	mk.Env = append(os.Environ(), "PATH=/usr/local/go/bin:"+os.Getenv("PATH"))
	mk.Stdout, mk.Stderr = out, out
	mk.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	must(t, mk.Start())
	done := make(chan struct{})
	go func() { mk.Wait(); close(done) }()
	exited := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	// interrupt is a terminal's ^C: SIGINT to the whole foreground group.
	interrupt := func() bool {
		if exited() {
			return true
		}
		syscall.Kill(-mk.Process.Pid, syscall.SIGINT)
		select {
		case <-done:
			return true
		case <-time.After(3 * time.Minute):
			return false
		}
	}
	t.Cleanup(func() {
		if !interrupt() {
			t.Errorf("make up did not stop within 3m of SIGINT; killing it")
			syscall.Kill(-mk.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("make up output:\n%s", out)
			for _, name := range []string{"containerd", "munged", "sharqctld", "sharqd-node1"} {
				b, _ := os.ReadFile(filepath.Join(localcluster.DefaultStateDir, "log", name+".log"))
				t.Logf("%s.log:\n%s", name, lastLines(string(b), 40))
			}
		}
	})

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

	// Ready: the socket answers qstat and the node is up. make up builds
	// first, which can take minutes on a busy CI machine.
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if exited() {
			t.Fatalf("make up exited before the cluster was up")
		}
		if nodes, err := client(0, "/", "sharqctl", "show", "nodes"); err == nil && strings.Contains(nodes, " up ") &&
			strings.Contains(out.String(), "is up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local cluster was not up within 10m")
		}
		time.Sleep(time.Second)
	}
	for _, want := range []string{sock, "export SHARQ_SOCKET=", "qsub", "make demo"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("make up's instructions lack %q:\n%s", want, out)
		}
	}

	// A second instance is refused, clearly, and changes nothing.
	second, err := exec.Command(filepath.Join(repo, "bin", "sharq-up"), "--repo", repo).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(string(second), "already up") {
		t.Errorf("second sharq-up: %v, want exit status 3 saying the cluster is already up:\n%s", err, second)
	}

	u, err := user.Lookup(localcluster.DefaultUser)
	must(t, err)
	uid, _ := strconv.Atoi(u.Uid)
	work, err := os.MkdirTemp("", "sharq-makeup-")
	must(t, err)
	defer os.RemoveAll(work)
	must(t, os.Chmod(work, 0o755))
	must(t, os.Chown(work, uid, uid))

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
	if !interrupt() {
		t.Fatalf("make up did not stop within 3m of SIGINT")
	}
	if s := out.String(); !strings.Contains(s, "Stopped: daemons ended") || strings.Contains(s, "with problems") {
		t.Errorf("make up did not report a clean stop:\n%s", lastLines(s, 20))
	}
	if leftovers := localLeftovers(t, sock, ctrSock); len(leftovers) > 0 {
		t.Errorf("left behind after ^C:\n%s", strings.Join(leftovers, "\n"))
	}
}

// localLeftovers lists what of a local cluster exists: processes using its
// configuration or containerd socket (daemons, shims), sockets, mounts and
// runc state of the sharq namespace.
func localLeftovers(t *testing.T, sock, ctrSock string) []string {
	t.Helper()
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
	for _, f := range []string{sock, ctrSock, filepath.Join(localcluster.DefaultStateDir, "containerd")} {
		if _, err := os.Stat(f); err == nil {
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
