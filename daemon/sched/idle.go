package sched

import "fmt"

// Idle GPUs. The driver watches the GPU use of running jobs (their node
// daemons sample it) and, under its idle policy, marks a job whose GPUs
// all stayed below a threshold for a while as idle (JobIdle); the core
// takes no clock for it. In every preemption search idle jobs come before
// busy ones: in the victim order, right after the jobs of other shares
// coming before the preemptor's own, and in the cost that picks among
// nodes, right after the in-share count (fewest busy victims wins). So a
// reclaim takes an idle borrower before a busy one wherever both would do.
// The mark belongs to the run: a job requeued and started again is busy
// until marked again.

// JobIdle marks a running job idle (Idle) or busy again (!Idle).
type JobIdle struct {
	ID   JobID
	Idle bool
}

func (JobIdle) isEvent() {}

func (s *Scheduler) jobIdle(e JobIdle) error {
	j := s.jobs[e.ID]
	if j == nil {
		return fmt.Errorf("%w: %s", ErrUnknownJob, e.ID)
	}
	if j.state != Running && j.state != Preempting {
		return fmt.Errorf("%w: job %s is not running", ErrInvalid, e.ID)
	}
	j.idleRun = e.Idle
	j.idleStart = j.started
	return nil
}

// idle says whether j's present run is marked idle.
func (j *job) idle() bool { return j.idleRun && j.idleStart.Equal(j.started) }

// Idle reports whether a running job's present run is marked idle.
func (s *Scheduler) Idle(id JobID) bool {
	j := s.jobs[id]
	return j != nil && (j.state == Running || j.state == Preempting) && j.idle()
}
