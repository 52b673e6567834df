package sched

import "fmt"

// outcome is how a job that left the core ended; the core keeps one per job
// it has seen end so that dependencies on it resolve.
type outcome struct {
	exit      int32 // its exit status (PBS: code, or 256+signal)
	started   bool  // it ran at some time
	cancelled bool
	failed    bool
}

// ok says whether the job succeeded: it ran and exited with 0.
func (o outcome) ok() bool {
	return o.started && !o.cancelled && !o.failed && o.exit == 0
}

// notice says a job started (after deps may resolve) or ended.
type notice struct {
	id    JobID
	ended bool
}

// notifyStarted tells the jobs waiting on id that it started (an array:
// that all its subjobs did).
func (s *Scheduler) notifyStarted(id JobID) { s.notify(notice{id: id}) }

// notifyEnded tells the jobs waiting on id that it ended for good.
func (s *Scheduler) notifyEnded(id JobID) { s.notify(notice{id: id, ended: true}) }

func (s *Scheduler) notify(n notice) {
	if len(s.waiters[n.id]) > 0 {
		s.notifyQ = append(s.notifyQ, n)
	} else if n.ended {
		delete(s.waiters, n.id)
	}
}

// drainNotices re-evaluates the jobs waiting on jobs that started or ended,
// failing those whose dependencies can no longer be met (which may in turn
// end other waits).
func (s *Scheduler) drainNotices() {
	for len(s.notifyQ) > 0 {
		n := s.notifyQ[0]
		s.notifyQ = s.notifyQ[1:]
		ws := s.waiters[n.id]
		if n.ended {
			delete(s.waiters, n.id)
		}
		for _, w := range ws {
			if w.gone || w.state != Pending || w.depsOK {
				continue
			}
			s.recheckDeps(w)
		}
	}
	s.notifyQ = s.notifyQ[:0]
}

// depStatus says whether d is satisfied, can never be, or names a job the
// core has never seen.
func (s *Scheduler) depStatus(d Dep) (sat, never, unknown bool) {
	if t, ok := s.jobs[d.On]; ok {
		if d.Type != After {
			return false, false, false
		}
		if t.arr != nil {
			return t.arr.allStarted, false, false
		}
		return t.everStarted, false, false
	}
	if pid, idx, ok := splitSubID(d.On); ok {
		if p, ok := s.jobs[pid]; ok && p.arr != nil && p.arr.hasRemaining(idx) {
			return false, false, false
		}
	}
	o, ok := s.outcomes[d.On]
	if !ok {
		return false, false, true
	}
	switch d.Type {
	case AfterOK:
		return o.ok(), !o.ok(), false
	case AfterNotOK:
		return !o.ok(), o.ok(), false
	case AfterAny:
		return true, false, false
	default: // After
		return o.started, !o.started, false
	}
}

// checkDeps validates a dependency list for job id.
func (s *Scheduler) checkDeps(id JobID, deps []Dep) error {
	for _, d := range deps {
		if d.Type > After {
			return fmt.Errorf("%w: job %s: dependency type %v", ErrInvalid, id, d.Type)
		}
		if d.On == id {
			return fmt.Errorf("%w: job %s depends on itself", ErrInvalid, id)
		}
		if _, _, unknown := s.depStatus(d); unknown {
			return fmt.Errorf("%w: %s (dependency of %s)", ErrUnknownJob, d.On, id)
		}
	}
	return nil
}

// setDeps registers j as a waiter on its unsatisfied dependencies and
// returns whether one can never be met.
func (s *Scheduler) setDeps(j *job) (never bool) {
	j.depsOK = true
	for _, d := range j.Deps {
		sat, nv, _ := s.depStatus(d)
		if nv {
			never = true
		}
		if !sat {
			j.depsOK = false
			if !nv {
				s.waiters[d.On] = append(s.waiters[d.On], j)
			}
		}
	}
	return never
}

// recheckDeps re-evaluates a waiting job's dependencies.
func (s *Scheduler) recheckDeps(j *job) {
	all, never := true, false
	for _, d := range j.Deps {
		sat, nv, unknown := s.depStatus(d)
		if nv || unknown {
			never = true
		}
		if !sat {
			all = false
		}
	}
	if never {
		s.failPending(j, ReasonDependencyNeverMet)
		return
	}
	if all {
		j.depsOK = true
		s.refresh(j)
	}
}

// forgotten drops the outcomes of jobs the driver no longer keeps, but
// those a job the core holds still names.
func (s *Scheduler) forgotten(e Forgotten) error {
	for _, id := range e.IDs {
		if _, held := s.jobs[id]; held {
			return fmt.Errorf("%w: job %s is not finished: its outcome cannot be forgotten", ErrInvalid, id)
		}
	}
	named := map[JobID]bool{}
	for _, j := range s.jobs {
		for _, d := range j.Deps {
			named[d.On] = true
		}
	}
	for _, id := range e.IDs {
		if !named[id] {
			delete(s.outcomes, id)
		}
	}
	return nil
}
