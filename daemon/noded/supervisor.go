package noded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// Job states in api.JobStateMsg.
const (
	stateRunning = api.RunRunning
	stateExited  = api.RunExited
	stateFailed  = api.RunFailed
)

// reasonWalltime is the stop reason of a run that used up its walltime
// (as the state file keeps it).
const reasonWalltime = string(api.StopWalltime)

// ErrWalltime is the error text of an exit after a walltime stop.
const errWalltime = "walltime exceeded"

// ExitUnknown is the exit status reported, with an error, for a container
// that disappeared without the runtime giving its status.
const ExitUnknown = -1

// job is one run this daemon looks after. Its fields change only in
// functions the supervisor's serial runs under the job's id.
type job struct {
	rec     jobRecord
	running bool
	status  int         // once !running
	err     string      // once !running: why it ended, if not by itself
	timer   *time.Timer // the walltime
	warning *time.Timer // the sessions' walltime warning
}

// stopTimers stops the job's walltime timer and its warning.
func (j *job) stopTimers() {
	if j.timer != nil {
		j.timer.Stop()
	}
	if j.warning != nil {
		j.warning.Stop()
	}
}

// supervisor runs the orders of one node against the runtime and watches
// the containers, reporting every change to the outbox.
type supervisor struct {
	ctx      context.Context
	node     string
	rt       runtime.Runtime
	store    store
	gpus     []api.GPU // inventory
	extra    []string  // extra devices of GPU jobs
	ckptRoot string
	part     conf.Partition // the node's partition: job confinement
	clients  jobClients     // what jobs get to submit jobs
	mounts   []conf.Mount   // configured mounts of every job
	hostImg  bool           // the partition allows runtime.HostImage
	sessions *sessions      // nil: the node serves no sessions
	log      *slog.Logger
	out      *outbox
	serial   *serial
	starting *starting // start orders taken and not yet handled (starting.go)
	health   *health
	selfTest *selfTest   // the runtime self-test (selftest.go)
	adopted  atomic.Bool // the node's containers are re-adopted (Run, watchHealth)
	lease    *lease      // the job lease (lease.go, fence.go)
	leaseMu  sync.Mutex  // one write of the lease file at a time

	mu     sync.Mutex
	jobs   map[string]*job
	closed bool           // set by shutdown
	wg     sync.WaitGroup // waiters

	// gpuHealth holds the faults found on the node's GPUs (gpuhealth.go).
	gpuHealth *gpu.Health
	// faultAcks says which of them the controller has read (gpurefuse.go).
	faultAcks gpuFaultAcks
	// check is the node health program's verdict (healthcheck.go).
	check *healthCheck
	// use is the running jobs' GPU use (gpuuse.go).
	use *gpuUse
}

// opTimeout bounds one runtime operation made for an order.
const opTimeout = 2 * time.Minute

// opCtx is the context of a runtime operation for an order: it outlives a
// shutdown that begins meanwhile, so a container is never left half made.
func (s *supervisor) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(s.ctx), opTimeout)
}

func (s *supervisor) get(id string) *job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jobs[id]
}

func (s *supervisor) put(j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs[j.rec.JobID] = j
}

func (s *supervisor) del(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.jobs, id)
}

// start runs a start order, unless the run already exists here.
func (s *supervisor) start(o *api.StartOrder) {
	id, run := o.Job.ID, o.Run
	log := s.log.With("job", id, "run", run)
	if s.ctx.Err() != nil {
		return
	}
	if j := s.get(id); j != nil && j.rec.Run == run {
		log.Info("start order for a run already on this node; reporting its state")
		s.reportCurrent(j)
		return
	}
	if why := s.health.get(); why != "" {
		s.failNode(id, run, why)
		return
	}
	if why := s.faultedGPU(o.GPUs); why != "" { // gpurefuse.go
		s.failGPU(id, run, why)
		return
	}
	if s.lease.state().due() {
		s.failNode(id, run, errLeaseStart)
		return
	}
	if j := s.get(id); j != nil {
		if j.running {
			s.fail(id, run, fmt.Errorf("job %s: run %d still runs on node %s", id, j.rec.Run, s.node))
			return
		}
		log.Warn("removing the exited container of an earlier run", "old_run", j.rec.Run)
		if err := s.removeJob(j); err != nil {
			s.fail(id, run, err)
			return
		}
	}
	if err := checkJobID(id); err != nil {
		s.fail(id, run, err)
		return
	}
	spec, err := prepareSpec(o, specInput{
		Node: s.node, GPUs: s.gpus, ExtraDevices: s.extra,
		JobDir: s.store.jobDir(id), CheckpointRoot: s.ckptRoot, Partition: s.part, Clients: s.clients,
		Mounts: s.mounts, HostImage: s.hostImg, Home: lookupHome,
	})
	if err != nil {
		s.store.drop(id)
		s.fail(id, run, err)
		return
	}
	rec := jobRecord{JobID: id, Run: run, Started: time.Now(), Walltime: o.Walltime, Grace: o.Grace, Interactive: o.Job.Interactive, GPUs: o.GPUs}
	if err := s.store.save(&rec); err != nil {
		s.store.drop(id)
		s.fail(id, run, err)
		return
	}
	octx, cancel := s.opCtx()
	err = s.rt.Start(octx, spec)
	cancel()
	if errors.Is(err, runtime.ErrExists) {
		log.Warn("the job's container exists already; adopting it")
		s.adoptExisting(id, run)
		return
	}
	if err != nil {
		s.store.drop(id)
		if why := s.probe(s.ctx); why != "" {
			s.failNode(id, run, why)
			return
		}
		if errors.Is(err, runtime.ErrRuntime) {
			// runc itself fails here (no cgroup mount...): the node's
			// fault; the controller requeues the job without counting
			// it, and drains a node that keeps failing so until a
			// self-test passes.
			s.selfTest.fail(spec.Image)
			s.failNode(id, run, fmt.Sprintf("job %s: start: %v", id, err))
			return
		}
		s.fail(id, run, fmt.Errorf("job %s: start: %w", id, err))
		return
	}
	s.selfTest.works()
	rec.Started = time.Now()
	if err := s.store.save(&rec); err != nil {
		log.Error("cannot record the start time; the walltime counts from just before the start", "err", err)
	}
	j := &job{rec: rec, running: true}
	s.put(j)
	log.Info("job started", "gpus", o.GPUs, "image", spec.Image, "uid", spec.UID, "walltime", o.Walltime, "interactive", rec.Interactive)
	s.reportCurrent(j)
	s.watch(j)
	if rec.Interactive {
		s.awaitPrimary(j)
	}
}

// adoptExisting takes over a container Start said exists, which the daemon
// did not know of, and reports its state: it is never started twice.
func (s *supervisor) adoptExisting(id string, run int) {
	tasks, err := s.rt.List(s.ctx)
	if err != nil {
		s.fail(id, run, fmt.Errorf("job %s: container exists but cannot be listed: %w", id, err))
		return
	}
	for _, t := range tasks {
		if t.JobID != id {
			continue
		}
		recs, _ := s.store.loadAll()
		s.adoptTask(t, recs[id])
		if t.Run != run {
			s.fail(id, run, fmt.Errorf("job %s: run %d exists on node %s", id, t.Run, s.node))
			return
		}
		s.reportCurrent(s.get(id))
		return
	}
	s.fail(id, run, fmt.Errorf("job %s: the runtime says the container exists but does not list it", id))
}

// adoptTask takes over a container found in the runtime, with its record.
func (s *supervisor) adoptTask(t runtime.Task, rec *jobRecord) {
	log := s.log.With("job", t.JobID, "run", t.Run)
	if rec == nil || rec.Run != t.Run {
		log.Warn("job container without a node record; its walltime is not enforced")
		rec = &jobRecord{JobID: t.JobID, Run: t.Run, Started: time.Now()}
		if err := s.store.save(rec); err != nil {
			log.Error("cannot record the adopted job", "err", err)
		}
	}
	j := &job{rec: *rec, running: t.Running, status: t.ExitStatus}
	s.put(j)
	if !t.Running {
		switch rec.StopReason {
		case reasonWalltime:
			j.err = errWalltime
		case reasonLease:
			j.err = errLease
		default:
			j.err = s.oomKilled(t.JobID)
		}
		log.Info("re-adopted an exited job container", "exit_status", t.ExitStatus)
		return
	}
	log.Info("re-adopted a running job container", "started", rec.Started)
	if rec.Interactive && rec.StopReason == "" {
		// Its session's process lost its streams with the old daemon.
		log.Warn("an interactive job's session did not survive the node daemon's restart; ending the job")
		s.stopJob(j, reasonSessionLost, 0)
	}
	if rec.StopReason != "" {
		left := max(time.Until(rec.StopTime.Add(rec.StopGrace)), 0)
		log.Info("re-issuing a stop interrupted by the daemon's restart", "reason", rec.StopReason, "grace", left)
		if err := s.rt.Stop(s.ctx, t.JobID, left); err != nil {
			log.Error("re-issuing the stop failed", "err", err)
		}
	}
	s.watch(j)
}

// watch arms a running job's walltime timer and waits for its exit.
func (s *supervisor) watch(j *job) {
	id := j.rec.JobID
	if j.rec.Walltime > 0 && j.rec.StopReason == "" {
		left := max(time.Until(j.rec.Started.Add(j.rec.Walltime)), 0)
		j.timer = time.AfterFunc(left, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.closed {
				s.serial.Do(id, func() { s.walltime(j) })
			}
		})
	}
	if j.rec.Walltime > 0 && j.rec.StopReason == "" && s.sessions != nil {
		s.warnWalltime(j)
	}
	s.wg.Add(1)
	go s.wait(j)
}

// warnWalltime tells the job's sessions, a tenth of its walltime (at most
// 5 minutes) before it ends, how long they have left; sessions that
// connect later are told at once (notices.go). Re-armed after a restart
// past that time, the warning is due at once.
func (s *supervisor) warnWalltime(j *job) {
	id, run, wall := j.rec.JobID, j.rec.Run, j.rec.Walltime
	ahead := min(wall/10, 5*time.Minute)
	end := j.rec.Started.Add(wall)
	at := time.Until(end.Add(-ahead))
	if at <= 0 {
		if left := time.Until(end); left > 0 {
			s.sessions.warnWalltime(id, run, wall, left, end)
		}
		return
	}
	// On the job's serial, as its stop notices: a stop that comes as the
	// timer fires is told after the warning, or the warning not at all.
	j.warning = time.AfterFunc(at, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			return
		}
		s.serial.Do(id, func() {
			if s.get(id) == j && j.running && j.rec.StopReason == "" {
				s.sessions.warnWalltime(id, run, wall, ahead, end)
			}
		})
	})
}

// wait reports the job's exit once the runtime gives it.
func (s *supervisor) wait(j *job) {
	defer s.wg.Done()
	id := j.rec.JobID
	delay := 500 * time.Millisecond
	for {
		status, err := s.rt.Wait(s.ctx, id)
		if s.ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			why := s.oomKilled(id)
			s.serial.Do(id, func() { s.exited(j, status, why) })
			return
		case errors.Is(err, runtime.ErrNotFound):
			s.serial.Do(id, func() { s.exited(j, ExitUnknown, "the job's container disappeared") })
			return
		}
		s.log.Warn("waiting for the job failed; retrying", "job", id, "err", err, "in", delay)
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// errOOM is the error text of an exit after the kernel's OOM killer killed
// a process of the job (its memory limit): qstat -f shows it.
const errOOM = "OOM killed"

// oomKilled returns errOOM if the job's container had a process killed for
// its memory limit, else "".
func (s *supervisor) oomKilled(id string) string {
	ctx, cancel := s.opCtx()
	defer cancel()
	oom, err := s.rt.OOMKilled(ctx, id)
	if err != nil {
		s.log.Warn("cannot tell whether the job was OOM killed", "job", id, "err", err)
	}
	if oom {
		return errOOM
	}
	return ""
}

// exited records and reports a run's end.
func (s *supervisor) exited(j *job, status int, why string) {
	if s.get(j.rec.JobID) != j || !j.running || s.ctx.Err() != nil {
		return
	}
	j.running, j.status = false, status
	j.stopTimers()
	if why == "" && j.rec.StopReason == reasonWalltime {
		why = errWalltime
	}
	if why == "" && j.rec.StopReason == reasonSessionLost {
		why = errSessionLost
	}
	if why == "" && j.rec.StopReason == reasonLease {
		why = errLease
	}
	j.err = why
	s.log.Info("job exited", "job", j.rec.JobID, "run", j.rec.Run, "exit_status", status, "error", why)
	s.reportCurrent(j)
}

// walltime stops a run that used up its walltime.
func (s *supervisor) walltime(j *job) {
	if s.get(j.rec.JobID) != j || !j.running || j.rec.StopReason != "" || s.ctx.Err() != nil {
		return
	}
	s.log.Info("walltime exceeded; stopping the job", "job", j.rec.JobID, "walltime", j.rec.Walltime, "grace", j.rec.Grace)
	s.sessions.notice(j.rec.JobID, j.rec.Run, fmt.Sprintf("job %s has used up its walltime (%v): it is stopped now (SIGTERM, then SIGKILL after %v)",
		j.rec.JobID, j.rec.Walltime, j.rec.Grace))
	s.stopJob(j, reasonWalltime, j.rec.Grace)
}

// stop runs a stop order.
func (s *supervisor) stop(o api.StopOrder) {
	log := s.log.With("job", o.JobID, "reason", o.Reason)
	j := s.get(o.JobID)
	switch {
	case j == nil:
		log.Warn("stop order for a job not on this node")
		return
	case !j.running:
		log.Info("stop order for an exited job; reporting its exit again")
		s.reportCurrent(j)
		return
	case j.rec.StopReason != "" && !time.Now().Add(o.Grace).Before(j.rec.StopTime.Add(j.rec.StopGrace)):
		log.Info("stop order for a job already stopping; the earlier deadline stands")
		return
	}
	reason := string(o.Reason)
	if reason == "" {
		reason = "stop"
	}
	if o.Reason != api.StopUnknown {
		s.sessions.notice(o.JobID, j.rec.Run, fmt.Sprintf("%s: it is stopped now (SIGTERM, then SIGKILL after %v)", stopText(reason), o.Grace))
	}
	s.stopJob(j, reason, o.Grace)
}

// signal delivers qsig's signal to the job's processes, if this node runs
// that run of the job and it has not exited.
func (s *supervisor) signal(o api.SignalOrder) {
	log := s.log.With("job", o.JobID, "run", o.Run, "signal", o.Signal)
	j := s.get(o.JobID)
	sig := syscall.Signal(o.Signal.Number())
	switch {
	case sig == 0:
		log.Warn("signal order without a signal")
		return
	case j == nil || j.rec.Run != o.Run:
		log.Warn("signal order for a run not on this node")
		return
	case !j.running:
		log.Info("signal order for an exited job; ignored")
		return
	}
	octx, cancel := s.opCtx()
	defer cancel()
	if err := s.rt.Signal(octx, o.JobID, sig); err != nil {
		log.Error("signal failed", "err", err)
		return
	}
	log.Info("job signalled")
}

// stopJob records a stop, so a restarted daemon re-issues it, and asks the
// runtime for SIGTERM now and SIGKILL after grace. The first reason stays.
func (s *supervisor) stopJob(j *job, reason string, grace time.Duration) {
	log := s.log.With("job", j.rec.JobID, "run", j.rec.Run)
	if j.rec.StopReason == "" {
		j.rec.StopReason = reason
	}
	j.rec.StopGrace, j.rec.StopTime = grace, time.Now()
	if err := s.store.save(&j.rec); err != nil {
		log.Error("cannot record the stop; a restart before the exit will not re-issue it", "err", err)
	}
	j.stopTimers()
	s.sessions.stopping(j.rec.JobID, j.rec.Run) // it ends by this stop, not its walltime
	log.Info("stopping job", "reason", reason, "grace", grace)
	octx, cancel := s.opCtx()
	defer cancel()
	if err := s.rt.Stop(octx, j.rec.JobID, grace); err != nil {
		log.Error("stop failed", "err", err)
	}
}

// remove deletes an exited job's container once the controller has
// recorded the exit.
func (s *supervisor) remove(id string) {
	log := s.log.With("job", id)
	j := s.get(id)
	if j == nil {
		// Left over, e.g. by a crash between removing the container and its
		// node directory: finish the removal.
		octx, cancel := s.opCtx()
		defer cancel()
		if err := s.rt.Remove(octx, id); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			log.Error("remove failed", "err", err)
			return
		}
		s.store.drop(id)
		return
	}
	if j.running {
		log.Warn("remove order for a running job; ignored")
		return
	}
	if err := s.removeJob(j); err != nil {
		log.Error("remove failed", "err", err)
		return
	}
	log.Info("job container removed", "run", j.rec.Run)
}

// removeJob deletes an exited job's container and node directory.
func (s *supervisor) removeJob(j *job) error {
	id := j.rec.JobID
	octx, cancel := s.opCtx()
	defer cancel()
	if err := s.rt.Remove(octx, id); err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return fmt.Errorf("job %s: remove: %w", id, err)
	}
	s.del(id)
	s.sessions.forget(id)
	if err := s.store.drop(id); err != nil {
		s.log.Warn("cannot delete the job's node directory", "job", id, "err", err)
	}
	return nil
}

// reportCurrent queues the job's present state.
func (s *supervisor) reportCurrent(j *job) {
	m := api.JobStateMsg{JobID: j.rec.JobID, Run: j.rec.Run, State: stateRunning, Time: j.rec.Started}
	if !j.running {
		m.State, m.ExitStatus, m.Error, m.Stop, m.Time = stateExited, j.status, j.err, stopOf(j), time.Now()
	}
	s.out.push(m)
}

// fail reports a run that could not start.
func (s *supervisor) fail(id string, run int, err error) {
	refusal := startRefusal(err)
	s.log.Error("job could not start", "job", id, "run", run, "err", err, "refusal", refusal)
	s.out.push(api.JobStateMsg{JobID: id, Run: run, State: stateFailed, ExitStatus: ExitUnknown, Error: err.Error(), Refusal: refusal, Time: time.Now()})
}

// startRefusal says whether a start error refuses the job itself: its work
// directory or an output file refused for its user (runtime.ErrWorkDir,
// runtime.ErrOutput) fails the same way on every attempt. Anything else
// (an image not there yet, a bad order, a mount missing here) may pass on
// another attempt or node.
func startRefusal(err error) api.StartRefusal {
	if errors.Is(err, runtime.ErrWorkDir) || errors.Is(err, runtime.ErrOutput) {
		return api.StartRefusedPath
	}
	return api.StartMayRetry
}

// failNode reports a run that could not start because of the node (its
// runtime is unavailable or cannot start containers): the controller
// requeues the job.
func (s *supervisor) failNode(id string, run int, why string) {
	s.log.Error("job could not start: the node's fault", "job", id, "run", run, "why", why)
	s.out.push(api.JobStateMsg{JobID: id, Run: run, State: stateFailed, ExitStatus: ExitUnknown, Error: why, NodeFault: true, Time: time.Now()})
}

// adopt takes over every job container of the node the runtime lists, and
// deletes the node directories of jobs whose container is gone.
func (s *supervisor) adopt() error {
	tasks, err := s.rt.List(s.ctx)
	if err != nil {
		return fmt.Errorf("node %s: list containers: %w", s.node, err)
	}
	recs, err := s.store.loadAll()
	if err != nil {
		return fmt.Errorf("node %s: %w", s.node, err)
	}
	var adopted sync.WaitGroup
	for _, t := range withoutSelfTest(tasks) {
		if t.Node != "" && t.Node != s.node {
			continue
		}
		rec := recs[t.JobID]
		delete(recs, t.JobID)
		adopted.Add(1)
		s.serial.Do(t.JobID, func() {
			defer adopted.Done()
			s.adoptTask(t, rec)
		})
	}
	adopted.Wait()
	for id := range recs {
		s.log.Info("dropping the node directory of a job without a container", "job", id)
		s.store.drop(id)
	}
	return nil
}

// shutdown waits for every goroutine of the supervisor and stops the
// timers; s.ctx must be done. Containers are left as they are.
func (s *supervisor) shutdown() {
	s.wg.Wait() // waiters end with s.ctx
	s.mu.Lock()
	s.closed = true // timers queue nothing from now on
	s.mu.Unlock()
	s.serial.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		j.stopTimers()
	}
}

// awaitPrimary ends an interactive job whose own session has not
// connected within primaryWait (its qsub -I was killed, say).
func (s *supervisor) awaitPrimary(j *job) {
	id := j.rec.JobID
	time.AfterFunc(primaryWait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || s.sessions.hasPrimary(id) {
			return
		}
		s.serial.Do(id, func() {
			if s.get(id) != j || !j.running || j.rec.StopReason != "" || s.sessions.hasPrimary(id) {
				return
			}
			s.log.Warn("the interactive job's session did not connect; ending the job", "job", id, "waited", primaryWait)
			s.stopJob(j, reasonSessionLost, 0)
		})
	})
}

// exitError is why an exited run ended, as its exit report says ("" if by
// itself or unknown), and the node's own stop that ended it, read behind
// the job's queued work.
func (s *supervisor) exitError(id string, run int) (why string, stop api.StopReason) {
	done := make(chan struct{})
	s.serial.Do(id, func() {
		defer close(done)
		j := s.get(id)
		switch {
		case j == nil || j.rec.Run != run:
			return
		case !j.running:
			why = j.err
		case j.rec.StopReason == reasonWalltime:
			why = errWalltime // its exit is not handled yet
		case j.rec.StopReason == reasonSessionLost:
			why = errSessionLost
		case j.rec.StopReason == reasonLease:
			why = errLease
		}
		stop = stopOf(j)
	})
	<-done
	return why, stop
}
