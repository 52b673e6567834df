package sched

import (
	"sort"

	"github.com/sharq-hpc/sharq/jobid"
)

// Array ids: the array is "123[].lab", its subjob i is "123[i].lab"
// (package jobid).

// isArrayID says whether id names a whole array.
func isArrayID(id JobID) bool { return jobid.IsArray(string(id)) }

// subID returns the id of subjob idx of array id.
func subID(array JobID, idx int) JobID { return JobID(jobid.SubOf(string(array), idx)) }

// splitSubID splits "123[7].lab" into "123[].lab" and 7.
func splitSubID(id JobID) (JobID, int, bool) {
	arr, idx, ok := jobid.SplitSub(string(id))
	return JobID(arr), idx, ok
}

func (a *arrayState) hasRemaining(idx int) bool {
	rest := a.indices[a.pos:]
	k := sort.SearchInts(rest, idx)
	return k < len(rest) && rest[k] == idx
}

// arrayOf returns the array state that limits j: its own, or its array's
// for a subjob.
func (s *Scheduler) arrayOf(j *job) *arrayState {
	if j.arr != nil {
		return j.arr
	}
	if j.sub {
		if p, ok := s.jobs[j.parent]; ok {
			return p.arr
		}
	}
	return nil
}

// atArrayLimit says whether j's array already runs its %max subjobs.
func (s *Scheduler) atArrayLimit(j *job) bool {
	a := s.arrayOf(j)
	return a != nil && a.maxRunning > 0 && len(a.running) >= a.maxRunning
}

// parentOf returns a subjob's array entry, if the core holds it.
func (s *Scheduler) parentOf(j *job) *job {
	if !j.sub {
		return nil
	}
	p := s.jobs[j.parent]
	if p == nil || p.arr == nil {
		return nil
	}
	return p
}

func removeJob(list []*job, j *job) []*job {
	for i, x := range list {
		if x == j {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// checkArrayDone finishes an array once no index is left to start and no
// subjob is pending or running.
func (s *Scheduler) checkArrayDone(p *job) {
	if p == nil || p.gone || p.arr == nil || p.arr.leaving {
		return
	}
	a := p.arr
	if a.remaining() > 0 || a.pendingSub > 0 || len(a.running) > 0 {
		return
	}
	if p.state == Pending {
		if p.nom != nil {
			s.releaseNom(p.nom)
		}
		s.queueRemove(p)
		p.share.pending--
		p.state = Running
	}
	exit := 0
	if p.failedFlag {
		exit = 1
	}
	s.plan.Finished = append(s.plan.Finished, p.ID)
	s.finish(p, outcome{exit: int32(exit), started: p.everStarted, cancelled: p.cancelled})
}

// noIndexLeft handles an array entry with no index left to start: it
// leaves its queue (its subjobs may still run or wait as entries of their
// own), "after" on it is met once none waits, and it finishes once none
// runs.
func (s *Scheduler) noIndexLeft(p *job) {
	if p.state == Pending {
		if p.nom != nil {
			// It preempted for an index that is gone: nothing may
			// start on its victims' GPUs for it.
			s.releaseNom(p.nom)
		}
		s.queueRemove(p)
		p.share.pending--
		p.state = Running
	}
	s.markAllStarted(p)
	s.checkArrayDone(p)
}

// markAllStarted records that every subjob of an array has started (the
// "after" dependency on the array is met).
func (s *Scheduler) markAllStarted(p *job) {
	a := p.arr
	if a.allStarted || a.remaining() > 0 || a.pendingSub > 0 {
		return
	}
	a.allStarted = true
	s.notifyStarted(p.ID)
}

// dropIndex removes a subjob that has not started from its array; the
// array finishes if that was all it had left.
func (s *Scheduler) dropIndex(p *job, idx int) {
	s.indexDropped(p, idx)
	a := p.arr
	rest := a.indices[a.pos:]
	k := sort.SearchInts(rest, idx)
	kept := make([]int, 0, len(rest)-1)
	kept = append(append(kept, rest[:k]...), rest[k+1:]...)
	a.indices, a.pos = kept, 0
	if a.remaining() == 0 {
		s.noIndexLeft(p)
	}
}

// indexDropped ends the waits on subjob idx of array p, which will never
// start (its qdel, or the array's): the jobs that depend on it resolve as
// on a job cancelled before it started (afterany and afternotok are met,
// afterok and after never can be) instead of waiting for ever. Only an
// index that jobs wait on gets an outcome, so a large array cancelled
// costs no memory per index.
func (s *Scheduler) indexDropped(p *job, idx int) {
	id := subID(p.ID, idx)
	if len(s.waiters[id]) == 0 {
		return
	}
	s.outcomes[id] = outcome{cancelled: true}
	s.notifyEnded(id)
}
