package noded

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/runtime"
)

// The supervisor's timers (walltime, the lease's fence) on synctest's
// fake clock: a supervisor over fakeRuntime, whose containers are
// channels, runs in a bubble where time.Now, time.AfterFunc and timers are
// fake and move on as soon as every goroutine waits. An hour of walltime
// passes at once, and the instants are exact.

// fakeRuntime is a runtime.Runtime whose containers are channels: Start
// makes one, Stop records when and with what grace and ends it (as SIGTERM
// would: 128+15), Wait blocks until it ends.
type fakeRuntime struct {
	mu    sync.Mutex
	tasks map[string]*fakeTask
}

type fakeTask struct {
	spec   runtime.Spec
	done   chan struct{}
	status int
	stops  []fakeStop
}

type fakeStop struct {
	at    time.Time
	grace time.Duration
}

func newFakeRuntime() *fakeRuntime { return &fakeRuntime{tasks: map[string]*fakeTask{}} }

func (r *fakeRuntime) Start(_ context.Context, s runtime.Spec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tasks[s.JobID]; ok {
		return runtime.ErrExists
	}
	r.tasks[s.JobID] = &fakeTask{spec: s, done: make(chan struct{})}
	return nil
}

func (r *fakeRuntime) task(id string) *fakeTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tasks[id]
}

func (r *fakeRuntime) Stop(_ context.Context, id string, grace time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tasks[id]
	if t == nil {
		return runtime.ErrNotFound
	}
	t.stops = append(t.stops, fakeStop{time.Now(), grace})
	select {
	case <-t.done:
	default:
		t.status = 128 + int(syscall.SIGTERM)
		close(t.done)
	}
	return nil
}

// stops returns the stops of job id so far.
func (r *fakeRuntime) stops(id string) []fakeStop {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.tasks[id]; t != nil {
		return append([]fakeStop(nil), t.stops...)
	}
	return nil
}

func (r *fakeRuntime) Signal(context.Context, string, syscall.Signal) error { return nil }

func (r *fakeRuntime) Wait(ctx context.Context, id string) (int, error) {
	t := r.task(id)
	if t == nil {
		return 0, runtime.ErrNotFound
	}
	select {
	case <-t.done:
		r.mu.Lock()
		defer r.mu.Unlock()
		return t.status, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (r *fakeRuntime) List(context.Context) ([]runtime.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runtime.Task
	for id, t := range r.tasks {
		select {
		case <-t.done:
			out = append(out, runtime.Task{JobID: id, Run: t.spec.Run, ExitStatus: t.status})
		default:
			out = append(out, runtime.Task{JobID: id, Run: t.spec.Run, Running: true})
		}
	}
	return out, nil
}

func (r *fakeRuntime) OOMKilled(context.Context, string) (bool, error) { return false, nil }

func (r *fakeRuntime) Remove(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.tasks, id)
	return nil
}

func (r *fakeRuntime) Health(context.Context) error { return nil }
func (r *fakeRuntime) Close() error                 { return nil }

// fakeSupervisor is a supervisor over rt with lease l, its state in a
// temporary directory, shut down when t ends.
func fakeSupervisor(t *testing.T, rt runtime.Runtime, l *lease) *supervisor {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	s := &supervisor{
		ctx: ctx, node: "n1", rt: rt, store: store{dir: filepath.Join(dir, "state")}, ckptRoot: filepath.Join(dir, "ckpt"),
		log: slog.New(slog.DiscardHandler), out: newOutbox(), serial: newSerial(), starting: newStarting(),
		health: newHealth(), selfTest: newSelfTest(), jobs: map[string]*job{}, lease: l,
	}
	t.Cleanup(func() {
		cancel()
		s.shutdown()
	})
	return s
}

// fakeOrder is a start order for a job of this test's user (so its
// checkpoint directory can be made its own without root).
func fakeOrder(id string, walltime, grace time.Duration) *api.StartOrder {
	return &api.StartOrder{
		Job: api.RunSpec{ID: id, WorkDir: "/", Command: []string{"true"},
			Owner: api.Owner{User: "u", UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}},
		Run: 1, Image: "img", Walltime: walltime, Grace: grace,
	}
}

// startJob runs a start order as the node's session does: serially with
// every other order and timer of the job.
func startJob(s *supervisor, o *api.StartOrder) {
	s.serial.Do(o.Job.ID, func() { s.start(o) })
	synctest.Wait()
}

// reports drains the supervisor's outbox: the states it would send.
func reports(s *supervisor) []api.JobStateMsg {
	var out []api.JobStateMsg
	for {
		m, ok := s.out.peek()
		if !ok {
			return out
		}
		out = append(out, m)
		s.out.pop()
	}
}

// exitOf is the exited report of job id among ms.
func exitOf(ms []api.JobStateMsg, id string) (api.JobStateMsg, bool) {
	for _, m := range ms {
		if m.JobID == id && m.State == stateExited {
			return m, true
		}
	}
	return api.JobStateMsg{}, false
}

func TestWalltimeOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wall, grace = time.Hour, 30 * time.Second
		rt := newFakeRuntime()
		s := fakeSupervisor(t, rt, newLease(func() time.Duration { return 0 }))
		start := time.Now()
		startJob(s, fakeOrder("1.c", wall, grace))
		if rt.task("1.c") == nil {
			t.Fatalf("not started: %+v", reports(s))
		}

		time.Sleep(wall - time.Nanosecond) // the fake clock: no real wait
		synctest.Wait()
		if st := rt.stops("1.c"); len(st) != 0 {
			t.Fatalf("stopped %v before its walltime", st[0].at.Sub(start))
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		st := rt.stops("1.c")
		if len(st) != 1 || !st[0].at.Equal(start.Add(wall)) || st[0].grace != grace {
			t.Fatalf("stops %+v, want one at start+%v with grace %v", st, wall, grace)
		}
		m, ok := exitOf(reports(s), "1.c")
		if !ok || m.Error != errWalltime || m.ExitStatus != 128+int(syscall.SIGTERM) {
			t.Fatalf("exit report %+v (found %v), want %q, status 143", m, ok, errWalltime)
		}
	})
}

func TestLeaseFenceOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const grant = 2*time.Minute + 500*time.Millisecond // a fence instant between two of guardLease's polls
		t0 := time.Now()
		l := newLease(func() time.Duration { return time.Since(t0) })
		rt := newFakeRuntime()
		s := fakeSupervisor(t, rt, l)
		// The controller acknowledges a heartbeat sent now with a lease.
		if l.ack(l.send(), grant) == nil {
			t.Fatal("the grant renewed nothing")
		}
		startJob(s, fakeOrder("2.c", 0, 0))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.guardLease(ctx) }()
		defer func() { cancel(); <-done }()

		fence := grant - fenceGrace(grant)
		time.Sleep(fence - time.Nanosecond)
		synctest.Wait()
		if st := rt.stops("2.c"); len(st) != 0 {
			t.Fatalf("fenced %v after the grant, before the fence instant %v", st[0].at.Sub(t0), fence)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		st := rt.stops("2.c")
		if len(st) != 1 || !st[0].at.Equal(t0.Add(fence)) || st[0].grace != fenceGrace(grant) {
			t.Fatalf("stops %+v, want one at +%v with grace %v (killed by the lease's end)", st, fence, fenceGrace(grant))
		}
		if m, ok := exitOf(reports(s), "2.c"); !ok || m.Error != errLease {
			t.Fatalf("exit report %+v (found %v), want %q", m, ok, errLease)
		}
		// Until a renewal, starts are refused: the node's fault, not the job's.
		startJob(s, fakeOrder("3.c", 0, 0))
		var refused bool
		for _, m := range reports(s) {
			refused = refused || m.JobID == "3.c" && m.State == stateFailed && m.NodeFault
		}
		if !refused || rt.task("3.c") != nil {
			t.Fatal("a start during the fence was not refused as the node's fault")
		}
	})
}
