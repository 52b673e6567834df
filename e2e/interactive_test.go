//go:build !unit

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/client"
	"github.com/sharq-hpc/sharq/internal/testcert"
	"github.com/sharq-hpc/sharq/session"
)

// term is a client command on a real pseudo-terminal, as a user types
// into it: the test writes keys and reads what the terminal shows.
type term struct {
	t    testing.TB
	logs fmt.Stringer // the daemons' logs, for failures
	f    *os.File     // the pty's master
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // expect matched up to here
	done chan error
}

// onTerm starts a client command as uid on a new 24x80 terminal.
func (c *cluster) onTerm(t testing.TB, uid int, name string, args ...string) *term {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = []string{"SHARQ_SOCKET=" + c.sock, "PATH=/usr/bin:/bin", "HOME=" + c.workdir, "LANG=C", "TERM=xterm"}
	cmd.Dir = c.workdir
	attr := &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if uid != 0 {
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	return startTerm(t, cmd, attr, c.logs)
}

// startTerm starts cmd on a new 24x80 terminal.
func startTerm(t testing.TB, cmd *exec.Cmd, attr *syscall.SysProcAttr, logs fmt.Stringer) *term {
	t.Helper()
	f, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: 24, Cols: 80}, attr)
	must(t, err)
	tm := &term{t: t, logs: logs, f: f, cmd: cmd, done: make(chan error, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { tm.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		f.Close()
	})
	return tm
}

// expect waits until the terminal shows a match of re after the previous
// match, and returns the match's submatches.
func (tm *term) expect(re string, d time.Duration) []string {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(d)
	for {
		tm.mu.Lock()
		s := tm.out.String()[tm.seen:]
		tm.mu.Unlock()
		if loc := rx.FindStringSubmatchIndex(s); loc != nil {
			m := rx.FindStringSubmatch(s)
			tm.mu.Lock()
			tm.seen += loc[1]
			tm.mu.Unlock()
			return m
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal did not show %q within %v; it shows:\n%q\nlogs:\n%s", re, d, s, tm.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.f, s); err != nil {
		tm.t.Fatal(err)
	}
}

// exit waits for the command to end and returns its exit status.
func (tm *term) exit(d time.Duration) int {
	tm.t.Helper()
	select {
	case err := <-tm.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			tm.t.Fatal(err)
		}
		return 0
	case <-time.After(d):
		tm.mu.Lock()
		defer tm.mu.Unlock()
		tm.t.Fatalf("the command did not end within %v; the terminal shows:\n%q", d, tm.out.String())
		return -1
	}
}

// waitSize asks the shell for its terminal's size until it is want: a
// window's new size travels from the terminal (SIGWINCH) through qsub and
// the node to the session's terminal.
func (tm *term) waitSize(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		tm.send("stty size\r")
		if got := tm.expect(`\n(\d+ \d+)\r`, time.Minute)[1]; got == want {
			return
		} else if time.Now().After(deadline) {
			tm.t.Fatalf("the session's terminal is %s, want %s", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// live waits until the session's shell answers. qsub says a job is ready
// once the controller has started it, before its container runs and the
// session connects: on a loaded machine that takes seconds, and a test
// that kills a daemon before then tests a start, not a session.
func (tm *term) live() {
	tm.t.Helper()
	tm.expect(`ready`, time.Minute)
	tm.send("echo LIVE-$((6*7))\r")
	tm.expect(`LIVE-42`, time.Minute)
}

// waiting reads the job id qsub -I prints while it waits.
func (tm *term) waiting() string {
	tm.t.Helper()
	return tm.expect(`qsub: waiting for job (\S+) to start`, time.Minute)[1]
}

func interactiveCluster(t testing.TB) *cluster {
	return newCluster(t, spec{
		nodes:  []string{"n1"},
		extra:  "session_listen = \"127.0.0.1:0\"\ndefault_share = \"b\"",
		part:   `max_interactive_walltime = "30m"`,
		shares: openShares,
	})
}

// TestInteractive drives qsub -I and qexec on real terminals against real
// containers: typed commands and their output, the window's size and its
// change, Ctrl-C to the job's foreground process, the shell's exit status
// as qsub's, plain pipes, walltime, qdel from another terminal, Ctrl-C
// while waiting, and another user refused.
func TestInteractive(t *testing.T) {
	c := interactiveCluster(t)

	t.Run("shell", func(t *testing.T) {
		tm := c.onTerm(t, alice, "qsub", "-I", "-l", "ngpus=2")
		id := tm.waiting()
		tm.expect(`qsub: job `+regexp.QuoteMeta(id)+` ready`, time.Minute)
		tm.send("echo GPUS=$CUDA_VISIBLE_DEVICES UID=$(id -u) ENV=$PBS_ENVIRONMENT JOB=$PBS_JOBID\r")
		// The first answer waits for the container and the session.
		tm.expect(`GPUS=\d+,\d+ UID=1000 ENV=PBS_INTERACTIVE JOB=`+regexp.QuoteMeta(id), time.Minute)
		tm.send("stty size\r")
		tm.expect(`\n24 80\r`, time.Minute)
		must(t, pty.Setsize(tm.f, &pty.Winsize{Rows: 40, Cols: 123}))
		tm.waitSize("40 123")
		// The child shell is the terminal's foreground job before it says
		// START: Ctrl-C reaches it or the sleep it becomes.
		tm.send("sh -c 'echo START; exec sleep 30'\r")
		tm.expect(`\nSTART\r`, time.Minute)
		tm.send("\x03") // Ctrl-C: SIGINT to the job's foreground process
		tm.send("echo rc=$?\r")
		tm.expect(`\nrc=130\r`, time.Minute)
		tm.send("exit 7\r")
		if code := tm.exit(time.Minute); code != 7 {
			t.Fatalf("qsub -I exit status %d, want 7", code)
		}
		c.waitState(id, "F", time.Minute)
		if v := c.field(id, "interactive"); v != "True" {
			t.Errorf("qstat -f interactive = %q, want True", v)
		}
		if st := c.field(id, "exit_status"); st != "7" {
			t.Errorf("job exit status %q, want 7", st)
		}
	})

	t.Run("pipes", func(t *testing.T) {
		cmd := exec.Command(filepath.Join(binDir, "qsub"), "-I", "--", "/bin/sh")
		cmd.Env = []string{"SHARQ_SOCKET=" + c.sock, "PATH=/usr/bin:/bin", "LANG=C"}
		cmd.Dir = c.workdir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: alice, Gid: alice}}
		cmd.Stdin = strings.NewReader("echo piped-$((1+2)); [ -t 0 ] || echo no-tty; exit 3\n")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("echo ... | qsub -I: %v, want exit status 3\nstdout %q\nstderr %q\nlogs:\n%s", err, out.String(), errOut.String(), c.logs)
		}
		if out.String() != "piped-3\nno-tty\n" {
			t.Errorf("stdout %q", out.String())
		}
	})

	t.Run("walltime", func(t *testing.T) {
		// The walltime counts from the container's start; a session that
		// connects after the warning (a tenth before the end) gets it at
		// once with the time left, but it must connect before the end. On
		// a loaded machine that took up to 9 s (exec into the container):
		// 3 s and 8 s were too short.
		tm := c.onTerm(t, alice, "qsub", "-I", "-l", "walltime=00:00:12", "-W", "grace=1")
		tm.live()
		tm.expect(`reaches its walltime \(12s\) in (1s|[0-9]+ms)`, time.Minute)
		tm.expect(`used up its walltime`, time.Minute)
		if code := tm.exit(time.Minute); code == 0 {
			t.Fatal("qsub -I exited 0 after its walltime")
		}
	})

	t.Run("qdel from another terminal", func(t *testing.T) {
		tm := c.onTerm(t, alice, "qsub", "-I")
		id := tm.waiting()
		tm.live()
		if _, e, err := c.runAs(alice, "qdel", id); err != nil {
			t.Fatalf("qdel: %v %s", err, e)
		}
		tm.expect(`deleted \(qdel\)`, time.Minute)
		if code := tm.exit(time.Minute); code == 0 {
			t.Fatal("qsub -I exited 0 after qdel")
		}
	})

	t.Run("ctrl-c while waiting deletes the job", func(t *testing.T) {
		tm := c.onTerm(t, alice, "qsub", "-I", "-h")
		id := tm.waiting()
		tm.send("\x03")
		tm.expect(`qsub: job `+regexp.QuoteMeta(id)+` deleted`, time.Minute)
		if code := tm.exit(time.Minute); code != 130 {
			t.Fatalf("exit status %d, want 130", code)
		}
		c.waitState(id, "F", time.Minute)
	})

	t.Run("qexec", func(t *testing.T) {
		id := c.qsub("-l", "ngpus=1", "--", "/bin/sleep", "60")
		c.waitState(id, "R", time.Minute)
		// Another user is refused, with PBS's status.
		_, e, err := c.runAs(bob, "qexec", id, "--", "/bin/true")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 159 || !strings.Contains(e, "Unauthorized") {
			t.Fatalf("bob's qexec into alice's job: %v %q", err, e)
		}
		// The owner gets a shell in the job, with its GPU, on a terminal.
		tm := c.onTerm(t, alice, "qexec", id)
		tm.send("echo IN-$PBS_JOBID-$CUDA_VISIBLE_DEVICES-$(id -u); [ -t 0 ] && echo TTY-ok\r")
		tm.expect(`IN-`+regexp.QuoteMeta(id)+`-\d+-1000`, time.Minute)
		tm.expect(`TTY-ok`, time.Minute)
		tm.send("ps -o comm | grep -c sleep; exit 4\r")
		tm.expect(`\n1\r`, time.Minute)
		if code := tm.exit(time.Minute); code != 4 {
			t.Fatalf("qexec exit status %d, want 4", code)
		}
		// The job goes on.
		if st := c.state(id); st != "R" {
			t.Fatalf("job state %s after qexec, want R", st)
		}
		out, e, err := c.runAs(alice, "qexec", id, "--", "/bin/sh", "-c", "echo piped; exit 5")
		if !errors.As(err, &ee) || ee.ExitCode() != 5 || out != "piped\n" {
			t.Fatalf("qexec with pipes: %v out %q err %q", err, out, e)
		}
		c.runAs(alice, "qdel", id)
	})

	t.Run("preempted", func(t *testing.T) {
		tm := c.onTerm(t, alice, "qsub", "-I", "-q", "b", "-l", "ngpus=8", "-W", "grace=1")
		id := tm.waiting()
		tm.live()
		owner := c.qsub("-q", "a", "-l", "ngpus=4", "--", "/bin/true")
		tm.expect(`the job was preempted: it is stopped now`, time.Minute)
		if code := tm.exit(time.Minute); code == 0 {
			t.Fatal("qsub -I exited 0 after a preemption")
		}
		c.waitState(id, "F", time.Minute)
		full, _, _ := c.runAs(0, "qstat", "-f", "-x", id)
		if !strings.Contains(full, "InteractivePreempted") {
			t.Errorf("qstat -f of the preempted interactive job lacks InteractivePreempted:\n%s", full)
		}
		c.waitState(owner, "F", time.Minute)
	})

	t.Run("one-time token", func(t *testing.T) {
		tm := c.onTerm(t, alice, "qsub", "-I")
		id := tm.waiting()
		tm.expect(`ready`, time.Minute)
		// An admin's grant, used once by hand: a second use is refused, as
		// is a made-up token, and the session's own is unaffected.
		resp, err := client.Call(context.Background(), c.sock, api.Request{Op: api.OpSession, Session: &api.SessionSpec{Job: id, Command: []string{"/bin/true"}}})
		must(t, err)
		g := resp.Session
		hello := func(token string) session.Frame {
			conn, err := net.Dial("tcp", g.Addr)
			must(t, err)
			defer conn.Close()
			w := session.NewWriter(conn)
			must(t, w.JSON(session.TypeHello, session.Hello{V: session.Version, Token: token}))
			conn.SetReadDeadline(time.Now().Add(time.Minute))
			f, err := session.ReadFrame(conn)
			must(t, err)
			return f
		}
		if f := hello(g.Token); f.Type != session.TypeReady {
			t.Fatalf("first use of the token: frame %d %q", f.Type, f.Payload)
		}
		for name, tok := range map[string]string{"used": g.Token, "made up": strings.Repeat("0", session.TokenLen)} {
			f := hello(tok)
			if f.Type != session.TypeRefused || !strings.Contains(string(f.Payload), "unknown, used or expired session token") {
				t.Errorf("%s token: frame %d %q, want a refusal", name, f.Type, f.Payload)
			}
		}
		tm.send("exit 0\r")
		if code := tm.exit(time.Minute); code != 0 {
			t.Fatalf("exit status %d", code)
		}
	})

	t.Run("controller restart", func(t *testing.T) {
		tm := c.onTerm(t, alice, "qsub", "-I")
		id := tm.waiting()
		tm.live()
		kill9(c.ctld)
		c.startCtld()
		tm.send("echo AFTER-$((40+2))\r")
		tm.expect(`AFTER-42`, time.Minute)
		c.waitNodes(1)
		tm.send("exit 0\r")
		if code := tm.exit(time.Minute); code != 0 {
			t.Fatalf("exit status %d after a controller restart", code)
		}
		c.waitState(id, "F", time.Minute)
	})

	t.Run("node daemon restart", func(t *testing.T) {
		tm := c.onTerm(t, alice, "qsub", "-I")
		id := tm.waiting()
		tm.live()
		kill9(c.nodes["n1"])
		tm.expect(`lost the session on n1`, time.Minute)
		if code := tm.exit(time.Minute); code == 0 {
			t.Fatal("qsub -I exited 0 after losing its session")
		}
		c.startNode("n1")
		c.waitState(id, "F", time.Minute)
		full, _, _ := c.runAs(0, "qstat", "-f", "-x", id)
		if !strings.Contains(full, "interactive session was lost") {
			t.Errorf("qstat -f lacks why the job ended:\n%s", full)
		}
	})
}

// TestInteractiveTLS: with client_tls the node's session port speaks TLS
// with the cluster's certificate, which qsub checks against the CA; without
// the CA qsub says what it lacks.
func TestInteractiveTLS(t *testing.T) {
	dir, err := os.MkdirTemp("", "sharq-tls-") // the user reads the CA
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	cert, key := testcert.SelfSigned(t, dir, "n1") // one host: the controller (127.0.0.1) and node n1
	c := newCluster(t, spec{
		nodes:  []string{"n1"},
		extra:  fmt.Sprintf("session_listen = \"127.0.0.1:0\"\ndefault_share = \"b\"\nclient_tls = true\ntls_cert = %q\ntls_key = %q\ntls_ca = %q", cert, key, cert),
		shares: openShares,
	})
	run := func(env ...string) (string, string, error) {
		cmd := exec.Command(filepath.Join(binDir, "qsub"), "-I", "--", "/bin/sh")
		cmd.Env = append([]string{"SHARQ_SOCKET=" + c.sock, "SHARQ_CONF=/nonexistent", "PATH=/usr/bin:/bin", "LANG=C"}, env...)
		cmd.Dir = c.workdir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: alice, Gid: alice}}
		cmd.Stdin = strings.NewReader("echo over-tls; exit 3\n")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	out, errOut, err := run("SHARQ_TLS_CA=" + cert)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || out != "over-tls\n" {
		t.Fatalf("qsub -I over TLS: %v\nstdout %q\nstderr %q\nlogs:\n%s", err, out, errOut, c.logs)
	}
	if !strings.Contains(c.logs.String(), "tls=true") {
		t.Errorf("the node does not say it serves sessions with TLS")
	}
	_, errOut, err = run()
	if err == nil || !strings.Contains(errOut, "with TLS and no CA is known") {
		t.Fatalf("qsub -I without the CA: %v %q", err, errOut)
	}
}
