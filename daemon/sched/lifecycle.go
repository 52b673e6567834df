package sched

import "time"

// start places j (for an array entry: its next subjob) on allocs and
// reports the Start.
func (s *Scheduler) start(j *job, allocs []Alloc, nodes []*node) {
	s.unreserve(j)
	sh := j.share
	if sh != nil && sh.part != nil {
		sh.part.starts++ // claims may be unmet now (pass.go, recheckClaims)
	}
	t := j
	var parent *job
	if a := j.arr; a != nil {
		idx := a.indices[a.pos]
		a.pos++
		t = &job{Job: j.Job, share: sh, sub: true, parent: j.ID, index: idx, depsOK: true, timeOK: true}
		t.Job.ID = subID(j.ID, idx)
		t.Job.Array = nil
		t.Job.Deps = nil
		t.Job.Hold = 0
		s.jobs[t.ID] = t
		parent = j
		if a.remaining() == 0 {
			s.queueRemove(j)
			sh.pending--
			j.state = Running
		}
	} else {
		s.queueRemove(j)
		sh.pending--
		if parent = s.parentOf(j); parent != nil {
			parent.arr.pendingSub--
		}
	}
	// The wait so far stays the job's (fair share's wait credit); a new
	// one begins if it comes back to the queue.
	t.waited = j.waitedNow(s.now)
	t.readyAt = time.Time{}
	t.state = Running
	t.allocs, t.anodes, t.started = allocs, nodes, s.now
	t.startGen = s.gen
	t.reason, t.reported = ReasonNone, ReasonNone
	borrowed := borrowedBy(sh, allocs)
	s.hold(t)
	for _, n := range nodes {
		s.nodeRefresh(n)
	}
	st := Start{Job: t.ID, Share: sh.cfg.Name, Borrowed: borrowed, Walltime: s.walltime(t), Grace: s.grace(t), Image: s.image(t)}
	for _, a := range allocs {
		st.Allocs = append(st.Allocs, Alloc{Node: a.Node, GPUs: append([]int(nil), a.GPUs...)})
	}
	if t.sub {
		st.Array, st.Index = t.parent, t.index
	}
	s.plan.Starts = append(s.plan.Starts, st)
	if !t.everStarted {
		t.everStarted = true
		s.notifyStarted(t.ID)
	}
	if parent != nil {
		parent.arr.running = append(parent.arr.running, t)
		parent.everStarted = true
		s.markAllStarted(parent)
	}
}

// finish removes j from the core and remembers how it ended.
func (s *Scheduler) finish(j *job, o outcome) {
	j.gone = true
	j.inReady = false
	delete(s.jobs, j.ID)
	s.outcomes[j.ID] = o
	s.notifyEnded(j.ID)
	if j.sub {
		if p := s.parentOf(j); p != nil {
			if !o.ok() {
				p.failedFlag = true
			}
			s.checkArrayDone(p)
		} else {
			s.orphanSubs[j.parent] = removeJob(s.orphanSubs[j.parent], j)
			if len(s.orphanSubs[j.parent]) == 0 {
				delete(s.orphanSubs, j.parent)
			}
		}
	}
}

// leavePending takes a pending entry out of its queue and counters.
func (s *Scheduler) leavePending(j *job) {
	if j.nom != nil {
		s.releaseNom(j.nom)
	}
	s.queueRemove(j)
	j.share.pending--
	if p := s.parentOf(j); p != nil {
		p.arr.pendingSub--
	}
	if a := j.arr; a != nil {
		for _, idx := range a.indices[a.pos:] {
			s.indexDropped(j, idx)
		}
		a.pos = len(a.indices)
		// The waiting subjobs go with it; the last one's end must not
		// end the entry too (checkArrayDone), which its caller fails,
		// cancels or finishes once.
		a.leaving = true
		for _, sj := range s.pendingSubs(j) {
			s.leavePending(sj)
			s.plan.Finished = append(s.plan.Finished, sj.ID)
			s.finish(sj, outcome{started: sj.everStarted, cancelled: true})
		}
		a.leaving = false
	}
}

// pendingSubs returns an array's preempted subjobs waiting in the queue.
func (s *Scheduler) pendingSubs(p *job) []*job {
	if p.arr == nil || p.arr.pendingSub == 0 {
		return nil
	}
	var out []*job
	for _, sj := range s.sortedJobs() {
		if sj.sub && sj.parent == p.ID && sj.state == Pending {
			out = append(out, sj)
		}
	}
	return out
}

// failPending fails a pending entry.
func (s *Scheduler) failPending(j *job, r Reason) {
	s.leavePending(j)
	j.state = Pending
	s.plan.Failed = append(s.plan.Failed, Failure{Job: j.ID, Reason: r})
	s.finish(j, outcome{started: j.everStarted, failed: true})
}

// cancelPending removes a pending entry at the user's request.
func (s *Scheduler) cancelPending(j *job) {
	s.leavePending(j)
	if j.sub {
		if p := s.parentOf(j); p != nil {
			p.failedFlag = true
		}
	}
	s.plan.Finished = append(s.plan.Finished, j.ID)
	s.finish(j, outcome{started: j.everStarted, cancelled: true})
}

// stopCause says why a job's processes are gone, for what its requeue
// counts: the plan's RequeueCause, or stopExited.
type stopCause = RequeueCause

const (
	stopExited       stopCause = 0                 // it ended (finished, or killed by qdel)
	stopPreempted              = CausePreempted    // the core preempted it
	stopNodeLost               = CauseNodeLost     // a node it ran on went down
	stopStartFailed            = CauseStartFailed  // its start failed on a node (StartFailed)
	stopStartRefused           = CauseStartRefused // a node refused the job itself (StartFailed.Refused): no retry
)

// stopped handles a job whose processes are gone. A preempted job or one
// that lost its node goes back to the queue, counted, and is reported in
// Plan.Requeued.
func (s *Scheduler) stopped(j *job, exit int, cause stopCause) {
	preempted := cause != stopExited
	wasCancelled := j.cancelled || j.state == Killing
	s.unhold(j)
	if wasCancelled {
		s.plan.Finished = append(s.plan.Finished, j.ID)
		s.finish(j, outcome{exit: int32(exit), started: true, cancelled: true})
		return
	}
	if !preempted {
		s.plan.Finished = append(s.plan.Finished, j.ID)
		s.finish(j, outcome{exit: int32(exit), started: true})
		return
	}
	s.requeue(j, cause)
}

// requeue puts a job that held GPUs back in its queue. A preempted job, or
// one that lost its node, is counted against its partition's limit for that
// cause, which may fail it instead.
func (s *Scheduler) requeue(j *job, cause stopCause) {
	if cause != stopExited {
		n, limit, r := &j.Preemptions, s.retries(j), ReasonPreemptionRetries
		switch cause {
		case stopNodeLost:
			n, limit, r = &j.NodeFailures, s.nodeRetries(j), ReasonNodeFailureRetries
		case stopStartFailed:
			n, limit, r = &j.StartFailures, s.startRetries(j), ReasonStartFailureRetries
		case stopStartRefused:
			n, limit, r = &j.StartFailures, 0, ReasonStartRefused
		}
		*n++
		if j.Interactive && cause != stopStartFailed {
			r = ReasonInteractivePreempted
			if cause == stopNodeLost {
				r = ReasonInteractiveNodeLost
			}
			limit, *n = 0, max(*n, 1)
		}
		if limit != Unlimited && *n > limit {
			s.plan.Failed = append(s.plan.Failed, Failure{Job: j.ID, Reason: r, Cause: cause, Counts: j.counts()})
			s.finish(j, outcome{started: true, failed: true})
			return
		}
		s.plan.Requeued = append(s.plan.Requeued, Requeue{Job: j.ID, Cause: cause, Counts: j.counts(), PreferNode: j.PreferNode})
	}
	j.state = Pending
	j.cancelled = false
	j.reason, j.reported = ReasonNone, ReasonNone
	j.share.pending++
	if p := s.parentOf(j); p != nil {
		p.arr.pendingSub++
	}
	s.refresh(j)
}

// releaseNom gives up a preemptor's nomination: its GPUs go back to the free
// pool (or, for those still held by victims, to the pool once they exit);
// the victims go on exiting, their GPUs spare for the next preemptor.
func (s *Scheduler) releaseNom(nm *nomination) {
	j, p := nm.j, nm.part
	s.unnominate(nm)
	for _, n := range nm.nodes {
		s.nodeRefresh(n)
	}
	for _, v := range nm.victims {
		v.victimOf = nil
	}
	nm.victims = nil
	for i, x := range p.noms {
		if x == nm {
			p.noms = append(p.noms[:i], p.noms[i+1:]...)
			break
		}
	}
	p.dirty = true
	s.refresh(j)
}

// unnominate takes nm off its nodes (GPUs, CPUs, memory, an Exclusive
// preemptor's hold; the caller refreshes the nodes or starts on them) and
// off its share's and user's counts; the job has no nomination after it.
func (s *Scheduler) unnominate(nm *nomination) {
	j := nm.j
	for i, n := range nm.nodes {
		n.nominated = n.nominated.andNot(setOf(nm.allocs[i].GPUs))
		rc, rm := n.reqOn(j)
		n.nomCPU -= rc
		n.nomMem -= rm
		if j.Exclusive {
			n.exclNom--
		}
	}
	s.shareAdd(j.share, shareDelta{nom: -nm.charge})
	s.userAdd(j, -1, nm.charge, userNominated)
	j.nom = nil
}

// startNominated starts the preemptors whose victims have exited and whose
// nominated GPUs are no longer held (other preempting jobs on them have
// exited too). A preemptor still
// waiting starts at once on free GPUs elsewhere when they hold it, giving
// up its nomination (its victims go on exiting; their GPUs are spare for
// the next preemptor), if its share stays within its quota counting its
// jobs still leaving.
func (s *Scheduler) startNominated(p *partition) {
	for i := 0; i < len(p.noms); {
		nm := p.noms[i]
		j := nm.j
		ok, wait := !s.atArrayLimit(j), len(nm.victims) > 0
		for k, n := range nm.nodes {
			g := setOf(nm.allocs[k].GPUs)
			switch {
			case !n.usable() || !n.held.andNot(n.leaving).and(g).isEmpty() || !n.exclLeaving():
				ok = false
			case !n.held.and(g).isEmpty() || n.excl > 0:
				wait = true // an Exclusive victim leaves its whole node at once
			}
			if j.Exclusive {
				// Alone on it: only once everything there has exited.
				o, w := n.nominatedWait()
				ok, wait = ok && o, wait || w
			}
			if n.overCommitted() {
				// The nominations counted the CPUs or memory of jobs
				// still leaving (orphaned victims, after a restart):
				// wait for them, never start beside them.
				if n.leaveCPU > 0 || n.leaveMem > 0 {
					wait = true
				} else {
					ok = false
				}
			}
		}
		if j.Exclusive && exclKeeps(nm.nodes) > nm.charge {
			// A node grew since it was nominated: it would keep more
			// than it was charged (exclusive.go); it plans again.
			ok = false
		}
		// Starting elsewhere must keep the share within its quota while its
		// own victims (in-share preemption) are still leaving; counting its
		// other preemptors' nominations too (usage counts j's own), within
		// its quota or, for a LEND_AND_BORROW share, its borrow limit.
		if sh := j.share; ok && wait && sh.inUse()+j.charge() <= sh.quota() &&
			(sh.usage() <= sh.quota() || mayBorrow(sh, sh.usage()-sh.quota())) {
			if allocs, nodes, free := s.placeFree(p, j); free {
				s.releaseNom(nm)
				s.overtake(j, nodes, allocs, nil)
				s.start(j, allocs, nodes)
				if j.arr != nil && j.state == Pending {
					s.refresh(j)
				}
				continue
			}
		}
		if ok && wait {
			i++
			continue
		}
		if !ok {
			s.releaseNom(nm)
			continue
		}
		s.unnominate(nm)
		p.noms = append(p.noms[:i], p.noms[i+1:]...)
		s.overtake(j, nm.nodes, nm.allocs, nil) // reclaim comes first
		s.start(j, nm.allocs, nm.nodes)
		if j.arr != nil && j.state == Pending {
			s.refresh(j)
		}
	}
}
