package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/runtime"
)

// Env is what the suite needs besides the runtime.
type Env struct {
	Image string // present in the runtime; has /bin/sh and busybox tools (sleep, cat, trap...)
	Node  string // the node the runtime serves (Spec.Node)
	UID   uint32 // user jobs run as
	GID   uint32
	// Dir is where job directories are made (default os.TempDir()); the
	// suite creates one per test owned by UID:GID.
	Dir string
	// Timeout bounds every wait of the suite (default 60 s).
	Timeout time.Duration
	// NoMemoryLimits declares that the runtime cannot apply Spec.Memory
	// here (package hostproc without a writable memory cgroup). The
	// OOMKilled case then checks that Start refuses a memory limit with
	// runtime.ErrUnsupported instead of dropping it, and that a job
	// without one is not reported OOM-killed; it does not skip.
	NoMemoryLimits bool
}

var seq atomic.Int64

// Run runs the conformance suite against runtimes made by newRuntime (one
// per test, closed at its end). Subtests run in parallel.
func Run(t *testing.T, newRuntime func(t *testing.T) runtime.Runtime, env Env) {
	if env.Timeout == 0 {
		env.Timeout = 60 * time.Second
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, h *harness)
	}{
		{"ExitCode", testExitCode},
		{"Output", testOutput},
		{"OutputJoined", testOutputJoined},
		{"OutputAppendsAcrossRuns", testOutputAppends},
		{"StartTwice", testStartTwice},
		{"StopTrapped", testStopTrapped},
		{"StopUntrapped", testStopUntrapped},
		{"StopIgnored", testStopIgnored},
		{"StopExited", testStopExited},
		{"Signal", testSignal},
		{"UnknownJob", testUnknownJob},
		{"ListAndRemove", testListAndRemove},
		{"RemoveRunning", testRemoveRunning},
		{"WaitContext", testWaitContext},
		{"OOMKilled", testOOMKilled},
		{"Health", testHealth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := newRuntime(t)
			t.Cleanup(func() {
				if err := rt.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			tc.fn(t, newHarness(t, rt, env))
		})
	}
}

// harness holds one test's runtime, directory and jobs.
type harness struct {
	t   *testing.T
	rt  runtime.Runtime
	env Env
	dir string
	ctx context.Context
}

func newHarness(t *testing.T, rt runtime.Runtime, env Env) *harness {
	dir, err := os.MkdirTemp(env.Dir, "sharq-rt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(env.UID), int(env.GID)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), env.Timeout)
	t.Cleanup(cancel)
	return &harness{t: t, rt: rt, env: env, dir: dir, ctx: ctx}
}

// JobID returns a job id unique in the process.
func JobID(prefix string) string {
	return fmt.Sprintf("%d.%s", seq.Add(1), prefix)
}

// spec is a job running script with sh -c, output in the test directory.
func (h *harness) spec(name, script string) runtime.Spec {
	return runtime.Spec{
		JobID:   JobID(name),
		Node:    h.env.Node,
		Image:   h.env.Image,
		UID:     h.env.UID,
		GID:     h.env.GID,
		Args:    []string{"/bin/sh", "-c", script},
		Env:     []string{"SHARQ_TEST=1"},
		WorkDir: h.dir,
		Stdout:  filepath.Join(h.dir, name+".out"),
		Stderr:  filepath.Join(h.dir, name+".err"),
	}
}

func (h *harness) start(s runtime.Spec) {
	h.t.Helper()
	if err := h.rt.Start(h.ctx, s); err != nil {
		h.t.Fatalf("start %s: %v", s.JobID, err)
	}
}

func (h *harness) wait(jobID string) int {
	h.t.Helper()
	code, err := h.rt.Wait(h.ctx, jobID)
	if err != nil {
		h.t.Fatalf("wait %s: %v", jobID, err)
	}
	return code
}

func (h *harness) remove(jobID string) {
	h.t.Helper()
	if err := h.rt.Remove(h.ctx, jobID); err != nil {
		h.t.Fatalf("remove %s: %v", jobID, err)
	}
}

// waitFor polls path until it contains text.
func (h *harness) waitFor(path, text string) {
	h.t.Helper()
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), text) {
			return
		}
		select {
		case <-h.ctx.Done():
			h.t.Fatalf("%s never contained %q (has %q)", path, text, data)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func testExitCode(t *testing.T, h *harness) {
	for _, code := range []int{0, 1, 3, 127, 255} {
		s := h.spec(fmt.Sprintf("exit%d", code), fmt.Sprintf("exit %d", code))
		h.start(s)
		if got := h.wait(s.JobID); got != code {
			t.Errorf("exit %d: Wait = %d", code, got)
		}
		// Wait again on the exited job: same answer.
		if got := h.wait(s.JobID); got != code {
			t.Errorf("exit %d: second Wait = %d", code, got)
		}
		h.remove(s.JobID)
	}
}

func testOutput(t *testing.T, h *harness) {
	s := h.spec("out", "echo to-stdout; echo to-stderr >&2")
	h.start(s)
	if got := h.wait(s.JobID); got != 0 {
		t.Fatalf("Wait = %d", got)
	}
	if got := read(t, s.Stdout); got != "to-stdout\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := read(t, s.Stderr); got != "to-stderr\n" {
		t.Errorf("stderr = %q", got)
	}
}

func testOutputJoined(t *testing.T, h *harness) {
	s := h.spec("joined", "echo one; echo two >&2; echo three")
	s.Stderr = s.Stdout
	h.start(s)
	if got := h.wait(s.JobID); got != 0 {
		t.Fatalf("Wait = %d", got)
	}
	if got := read(t, s.Stdout); got != "one\ntwo\nthree\n" {
		t.Errorf("joined output = %q", got)
	}
}

func testOutputAppends(t *testing.T, h *harness) {
	s := h.spec("append", `echo "run $SHARQ_RUN"`)
	for run := range 2 {
		s.Run = run
		s.Env = []string{fmt.Sprintf("SHARQ_RUN=%d", run)}
		h.start(s)
		if got := h.wait(s.JobID); got != 0 {
			t.Fatalf("run %d: Wait = %d", run, got)
		}
		h.remove(s.JobID)
	}
	if got := read(t, s.Stdout); got != "run 0\nrun 1\n" {
		t.Errorf("stdout after two runs = %q", got)
	}
}

func testStartTwice(t *testing.T, h *harness) {
	s := h.spec("twice", "echo ready; exec sleep 1000")
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	if err := h.rt.Start(h.ctx, s); !errors.Is(err, runtime.ErrExists) {
		t.Errorf("second Start while running: %v, want ErrExists", err)
	}
	if err := h.rt.Stop(h.ctx, s.JobID, 0); err != nil {
		t.Fatal(err)
	}
	h.wait(s.JobID)
	if err := h.rt.Start(h.ctx, s); !errors.Is(err, runtime.ErrExists) {
		t.Errorf("Start of an exited, unremoved job: %v, want ErrExists", err)
	}
	h.remove(s.JobID)
	s.Args = []string{"/bin/sh", "-c", "exit 7"}
	s.Run = 1
	h.start(s)
	if got := h.wait(s.JobID); got != 7 {
		t.Errorf("restarted job: Wait = %d, want 7", got)
	}
}

func testStopTrapped(t *testing.T, h *harness) {
	s := h.spec("trapped", `trap 'echo got-term; exit 0' TERM; echo ready; while :; do sleep 0.1; done`)
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	if err := h.rt.Stop(h.ctx, s.JobID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := h.wait(s.JobID); got != 0 {
		t.Errorf("job that exits 0 on TERM: Wait = %d, want 0", got)
	}
	if got := read(t, s.Stdout); !strings.Contains(got, "got-term") {
		t.Errorf("stdout = %q, want got-term", got)
	}
}

func testStopUntrapped(t *testing.T, h *harness) {
	s := h.spec("untrapped", "echo ready; sleep 1000; echo not-reached")
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	if err := h.rt.Stop(h.ctx, s.JobID, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, want := h.wait(s.JobID), 256+15; got != want {
		t.Errorf("job without TERM trap: Wait = %d, want %d (killed by SIGTERM)", got, want)
	}
	if got := read(t, s.Stdout); strings.Contains(got, "not-reached") {
		t.Errorf("script went on after SIGTERM: %q", got)
	}
}

func testStopIgnored(t *testing.T, h *harness) {
	s := h.spec("ignored", `trap '' TERM; echo ready; while :; do sleep 0.1; done`)
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	if err := h.rt.Stop(h.ctx, s.JobID, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if got, want := h.wait(s.JobID), 256+9; got != want {
		t.Errorf("job ignoring TERM: Wait = %d, want %d (SIGKILL after grace)", got, want)
	}
}

func testStopExited(t *testing.T, h *harness) {
	s := h.spec("exited", "exit 143")
	h.start(s)
	if got := h.wait(s.JobID); got != 143 {
		t.Fatalf("Wait = %d", got)
	}
	if err := h.rt.Stop(h.ctx, s.JobID, 0); err != nil {
		t.Errorf("Stop of an exited job: %v", err)
	}
	if got := h.wait(s.JobID); got != 143 {
		t.Errorf("after Stop of an exited job: Wait = %d, want its own 143", got)
	}
}

// testSignal: a signal reaches the job's processes (its script traps it and
// goes on), and signalling an exited job is no error and changes nothing.
func testSignal(t *testing.T, h *harness) {
	s := h.spec("signal", `trap 'echo got-usr1; exit 5' USR1; echo ready; while :; do sleep 0.1; done`)
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	if err := h.rt.Signal(h.ctx, s.JobID, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if got := h.wait(s.JobID); got != 5 {
		t.Errorf("job that exits 5 on USR1: Wait = %d, want 5", got)
	}
	if got := read(t, s.Stdout); !strings.Contains(got, "got-usr1") {
		t.Errorf("stdout = %q, want got-usr1", got)
	}
	if err := h.rt.Signal(h.ctx, s.JobID, syscall.SIGTERM); err != nil {
		t.Errorf("Signal of an exited job: %v", err)
	}
	if got := h.wait(s.JobID); got != 5 {
		t.Errorf("after Signal of an exited job: Wait = %d, want its own 5", got)
	}
}

func testUnknownJob(t *testing.T, h *harness) {
	id := JobID("unknown")
	if err := h.rt.Signal(h.ctx, id, syscall.SIGUSR1); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Signal: %v, want ErrNotFound", err)
	}
	if err := h.rt.Stop(h.ctx, id, time.Second); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Stop: %v, want ErrNotFound", err)
	}
	if _, err := h.rt.Wait(h.ctx, id); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Wait: %v, want ErrNotFound", err)
	}
	if err := h.rt.Remove(h.ctx, id); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Remove: %v, want ErrNotFound", err)
	}
}

func (h *harness) find(jobID string) (runtime.Task, bool) {
	h.t.Helper()
	tasks, err := h.rt.List(h.ctx)
	if err != nil {
		h.t.Fatalf("list: %v", err)
	}
	i := slices.IndexFunc(tasks, func(t runtime.Task) bool { return t.JobID == jobID })
	if i < 0 {
		return runtime.Task{}, false
	}
	return tasks[i], true
}

func testListAndRemove(t *testing.T, h *harness) {
	s := h.spec("list", "echo ready; exec sleep 1000")
	s.Run = 2
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	want := runtime.Task{JobID: s.JobID, Node: h.env.Node, Run: 2, Running: true}
	if got, ok := h.find(s.JobID); !ok || got != want {
		t.Errorf("running: List has %+v (found %v), want %+v", got, ok, want)
	}
	if err := h.rt.Stop(h.ctx, s.JobID, time.Hour); err != nil {
		t.Fatal(err)
	}
	code := h.wait(s.JobID)
	want = runtime.Task{JobID: s.JobID, Node: h.env.Node, Run: 2, ExitStatus: code}
	if got, ok := h.find(s.JobID); !ok || got != want {
		t.Errorf("exited: List has %+v (found %v), want %+v", got, ok, want)
	}
	h.remove(s.JobID)
	if got, ok := h.find(s.JobID); ok {
		t.Errorf("removed job still listed: %+v", got)
	}
	if _, err := h.rt.Wait(h.ctx, s.JobID); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Wait after Remove: %v, want ErrNotFound", err)
	}
}

func testRemoveRunning(t *testing.T, h *harness) {
	s := h.spec("rmrunning", "echo ready; exec sleep 1000")
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	if err := h.rt.Remove(h.ctx, s.JobID); !errors.Is(err, runtime.ErrRunning) {
		t.Errorf("Remove of a running job: %v, want ErrRunning", err)
	}
	if got, ok := h.find(s.JobID); !ok || !got.Running {
		t.Errorf("after refused Remove: %+v (found %v), want running", got, ok)
	}
	if err := h.rt.Stop(h.ctx, s.JobID, 0); err != nil {
		t.Fatal(err)
	}
	h.wait(s.JobID)
	h.remove(s.JobID)
}

func testWaitContext(t *testing.T, h *harness) {
	s := h.spec("waitctx", "echo ready; exec sleep 1000")
	h.start(s)
	h.waitFor(s.Stdout, "ready")
	ctx, cancel := context.WithTimeout(h.ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := h.rt.Wait(ctx, s.JobID); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with an ending context on a running job: %v, want DeadlineExceeded", err)
	}
	if err := h.rt.Stop(h.ctx, s.JobID, 0); err != nil {
		t.Fatal(err)
	}
	h.wait(s.JobID)
}

// testOOMKilled: a job over its memory limit is killed by the kernel, and
// the runtime says so; a job that stays below it is not reported.
func testOOMKilled(t *testing.T, h *harness) {
	if h.env.NoMemoryLimits {
		testNoMemoryLimits(t, h)
		return
	}
	for _, tc := range []struct {
		name, script string
		oom          bool
	}{
		{"oom", "dd if=/dev/zero of=/dev/null bs=256M count=1", true},
		{"small", "dd if=/dev/zero of=/dev/null bs=1M count=1", false},
	} {
		s := h.spec(tc.name, tc.script)
		s.Memory = 64 << 20
		h.start(s)
		code := h.wait(s.JobID)
		oom, err := h.rt.OOMKilled(h.ctx, s.JobID)
		if err != nil || oom != tc.oom {
			t.Errorf("%s: status %d, OOMKilled %v (%v), want %v", tc.name, code, oom, err, tc.oom)
		}
		if tc.oom && code == 0 {
			t.Errorf("%s: status 0 after an OOM kill", tc.name)
		}
		h.remove(s.JobID)
		if _, err := h.rt.OOMKilled(h.ctx, s.JobID); !errors.Is(err, runtime.ErrNotFound) {
			t.Errorf("%s: OOMKilled after Remove: %v, want ErrNotFound", tc.name, err)
		}
	}
}

// testNoMemoryLimits: a runtime declared unable to limit memory refuses a
// limit, and reports a job without one as not OOM-killed.
func testNoMemoryLimits(t *testing.T, h *harness) {
	t.Log("runtime declares NoMemoryLimits: checking that a limit is refused, not dropped")
	s := h.spec("limit", "exit 0")
	s.Memory = 64 << 20
	if err := h.rt.Start(h.ctx, s); !errors.Is(err, runtime.ErrUnsupported) {
		t.Fatalf("Start with a memory limit: %v, want ErrUnsupported", err)
	}
	if _, ok := h.find(s.JobID); ok {
		t.Errorf("refused job %s is listed", s.JobID)
	}
	s = h.spec("nolimit", "dd if=/dev/zero of=/dev/null bs=1M count=1")
	h.start(s)
	if code := h.wait(s.JobID); code != 0 {
		t.Errorf("status %d", code)
	}
	if oom, err := h.rt.OOMKilled(h.ctx, s.JobID); err != nil || oom {
		t.Errorf("OOMKilled %v (%v), want false", oom, err)
	}
	h.remove(s.JobID)
}

// testHealth: a working runtime is healthy.
func testHealth(t *testing.T, h *harness) {
	if err := h.rt.Health(h.ctx); err != nil {
		t.Errorf("Health of a working runtime: %v", err)
	}
}
