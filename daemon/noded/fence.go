package noded

import (
	"context"
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// reasonLease is the stop reason of a run the node stopped because its job
// lease ran out (as the state file keeps it).
const reasonLease = string(api.StopLease)

// errLease is the error text of an exit after a lease stop.
const errLease = "stopped by its node: the job lease ran out (the node lost the controller)"

// errLeaseStart is why a start is refused while the lease runs out.
const errLeaseStart = "the node's job lease is running out (no answer from the controller)"

// leasePoll bounds the wait between two looks at the lease.
const leasePoll = time.Second

// guardLease fences the node's jobs when its lease runs out: from the
// fence instant on, every running job is stopping (SIGTERM) and is killed
// at the lease's end at the latest. It looks at the lease at least every
// leasePoll until ctx ends.
func (s *supervisor) guardLease(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := s.lease.state()
		wait := leasePoll
		switch {
		case st.due():
			s.fence()
		case st.held:
			wait = min(wait, st.fence-st.now)
		}
		t.Reset(wait)
	}
}

// fence stops every running job of the node whose stop would not end by
// the lease's end.
func (s *supervisor) fence() {
	for _, j := range s.runningJobs() {
		s.serial.Do(j.rec.JobID, func() { s.fence1(j) })
	}
}

func (s *supervisor) fence1(j *job) {
	st := s.lease.state()
	if !st.due() || s.get(j.rec.JobID) != j || !j.running || s.ctx.Err() != nil {
		return
	}
	grace := max(st.end-st.now, 0)
	if j.rec.StopReason != "" && !time.Now().Add(grace).Before(j.rec.StopTime.Add(j.rec.StopGrace)) {
		return // stopping already, and killed by the lease's end
	}
	id := j.rec.JobID
	s.log.Warn("the job lease is running out: stopping the job (no answer from the controller)", "job", id, "run", j.rec.Run, "kill_in", grace)
	s.sessions.notice(id, j.rec.Run, fmt.Sprintf("job %s: its node lost the controller: it is stopped now (SIGTERM, then SIGKILL after %v)", id, grace.Round(time.Millisecond)))
	s.stopJob(j, reasonLease, grace)
}

// runningJobs lists the node's running jobs.
func (s *supervisor) runningJobs() []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	var jobs []*job
	for _, j := range s.jobs {
		if j.running {
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// renewed keeps a renewal of the lease (nil: none) in the state directory,
// so that a restarted daemon does not extend the lease.
func (s *supervisor) renewed(r *leaseRecord) {
	if r == nil {
		return
	}
	s.leaseMu.Lock()
	defer s.leaseMu.Unlock()
	if err := saveLease(s.store.dir, r); err != nil {
		s.log.Error("cannot keep the job lease's renewal; a restart before the next one fences from the last one kept", "err", err)
	}
}

// stopOf is the node's own stop that ended j, for its exit report.
func stopOf(j *job) api.StopReason {
	if j.rec.StopReason == reasonLease {
		return api.StopLease
	}
	return api.StopNone
}
