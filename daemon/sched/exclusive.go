package sched

// Exclusive placement (PBS place=excl, issue 17 item 9).
//
// An Exclusive job runs alone on each of its nodes: it starts only on idle
// nodes (no job, no nomination, nothing leaving), and while it holds a node
// nothing else is placed there (n.excl > 0 makes the node's free count 0,
// so it drops out of the free-count buckets, and place skips it even for a
// job that asks for no GPU).
//
// What it is charged (issue 30 item 1): every GPU of the nodes it keeps
// (job.blocked: the node's GPUs when it started), against its share's
// quota and borrow limit and its user's max_gpus_per_user, as Slurm
// charges an exclusive allocation the whole node. Before it is placed the
// quota checks count the partition's largest node for each of its nodes
// (job.charge), and a nomination keeps that count (nomination.charge);
// once it holds nodes it counts theirs (job.gpuN). So the GPUs it did not
// ask for are its share's: beyond its quota they are borrowed, the share
// is over quota, and their owners reclaim them (preempting the job frees
// the whole node); a share's quota stays recoverable. Charging only what
// it asked for (as before) let a share with a 4-GPU quota lock four
// 8-GPU nodes with four 1-GPU exclusive jobs that were never reclaimed.
// A RESERVE or LEND share whose quota is smaller than the charge can never
// run it: it is held as over every cap (neverfits.go, QuotaLimitExceeded).
//
// Preemption: an Exclusive job is a victim like any other (its whole
// nodes' GPUs count for whether its share is over quota), and preempting it frees its
// whole node: a preemptor's search counts the blocked GPUs as the victim's
// (gpusOn), and while it leaves they are all spare. An Exclusive job
// preempts by the same rules as any job (cross-share reclaim, in-share
// preemption), but a node fits it only when every job on it is a victim or
// already leaving and no other preemptor is nominated there (fitsOn); its
// nomination then blocks the whole node (n.exclNom: nothing is placed
// there and none of it is spare for other preemptors) until it starts.
// When no such node set exists it waits with ReasonNoIdleNodes.

// idle says whether n has nothing on it: no job, no nomination, nothing
// leaving.
func (n *node) idle() bool {
	return len(n.jobs) == 0 && n.excl == 0 && n.exclNom == 0 && n.nominated.isEmpty() && n.leaving.isEmpty()
}

// takes says whether exclusivity lets j be placed on n now: an Exclusive
// job needs an idle node, any other job a node no Exclusive job holds or
// is nominated on.
func (n *node) takes(j *job) bool {
	if j.Exclusive {
		return n.idle()
	}
	return n.excl == 0 && n.exclNom == 0
}

// clearFor says whether an Exclusive preemptor's search may count n as
// fitting: every job on it is taken as a victim or already leaving, and
// all its GPUs are in the room (none nominated for another preemptor).
func (se *search) clearFor(n *node, g int) bool {
	if g < n.valid.count() || n.exclNom > 0 {
		return false
	}
	for _, v := range n.jobs {
		if v.state == Preempting {
			continue
		}
		i, ok := se.candIdx(v)
		if !ok || !se.taken[i] {
			return false
		}
	}
	return true
}

// candIdx is v's position among the search's candidates.
func (se *search) candIdx(v *job) (int, bool) {
	if se.pos == nil {
		se.pos = make(map[*job]int, len(se.cands))
		for i, c := range se.cands {
			se.pos[c] = i
		}
	}
	i, ok := se.pos[v]
	return i, ok
}

// nominatedWait decides, for an Exclusive preemptor's nominated node,
// whether it may start there (ok) and whether it must wait: only once
// every job on it has exited; a job there that is not leaving ends the
// nomination.
func (n *node) nominatedWait() (ok, wait bool) {
	for _, v := range n.jobs {
		if v.state != Preempting && v.state != Killing {
			return false, false
		}
		wait = true
	}
	return true, wait
}

// exclLeaving says whether every Exclusive job holding n is being
// preempted (true when none holds it).
func (n *node) exclLeaving() bool {
	if n.excl == 0 {
		return true
	}
	for _, j := range n.jobs {
		if j.Exclusive && j.state != Preempting {
			return false
		}
	}
	return true
}

// keeps is the set of GPUs j keeps from others on its i-th node: all of
// the node's for an Exclusive job, its allocation otherwise.
func (j *job) keeps(i int) gpuSet {
	if j.Exclusive && i < len(j.blocked) {
		return j.blocked[i]
	}
	return setOf(j.allocs[i].GPUs)
}

// idleShort counts the usable idle nodes that could hold j; fewer than it
// needs means it waits for ReasonNoIdleNodes.
func (s *Scheduler) idleShort(p *partition, j *job) bool {
	k := 0
	for _, n := range p.nodes {
		if n.usable() && n.idle() && n.fitsDeclared(j) && n.free >= j.GPUsPerNode {
			k++
		}
	}
	return k < j.Nodes
}

// exclKeeps is what an Exclusive job placed on nodes would keep (and be
// charged): all their GPUs.
func exclKeeps(nodes []*node) int {
	n := 0
	for _, x := range nodes {
		n += x.valid.count()
	}
	return n
}

// startExclSmall starts j, an Exclusive job of sh that does not fit its
// share's quota or the pool as charged before placement (the partition's
// largest node for each of its nodes), on idle nodes whose own GPUs fit
// both within its quota (issue 30 item 3): before, it preempted its
// share's jobs for the quota, or reclaimed borrowed GPUs for the pool, by
// the largest node's count, and the victims started again on the GPUs
// they had left once it started on a smaller node. rq is the quota
// headroom its share keeps for jobs ahead of it. true when it started.
func (s *Scheduler) startExclSmall(p *partition, sh *share, j *job, rq int) bool {
	allocs, nodes, ok, _ := s.placeBF(p, j, withinQuota)
	if !ok {
		return false
	}
	keeps := exclKeeps(nodes)
	if sh.usage()+rq+keeps > sh.quota() || !sh.reserve() && keeps+rq > p.slack() {
		return false
	}
	s.startPlaced(sh, j, withinQuota, allocs, nodes)
	return true
}
