package sched

import "math/bits"

// nodeRefresh recomputes a node's free GPU count and keeps the partition's
// free-count buckets and totals right. Call it after any change to the node.
func (s *Scheduler) nodeRefresh(n *node) {
	p := n.part
	if p != nil && n.bucket >= 0 {
		b := n.bucket
		p.buckets[b][n.pidx>>6] &^= 1 << (uint(n.pidx) & 63)
		p.bucketN[b]--
		p.freeAvail -= n.free
		p.usable--
		p.capUsable -= n.capCounted
		n.bucket = -1
		s.topoCount(n, -1)
	}
	n.prof.gen = 0 // its release profile changes with it
	s.resvIndexTouch(n)
	n.free = n.valid.andNot(n.held).andNot(n.nominated).count()
	if n.excl > 0 || n.exclNom > 0 {
		n.free = 0 // an Exclusive job keeps the rest (exclusive.go)
	}
	if p != nil {
		p.spare -= n.spare
	}
	n.spare = n.leaving.andNot(n.nominated).count()
	if n.exclNom > 0 {
		n.spare = 0 // all of it is the Exclusive preemptor's
	}
	if p != nil {
		p.spare += n.spare
	}
	if p == nil || !n.usable() {
		return
	}
	if n.gpus > p.maxGPUs {
		p.maxGPUs = n.gpus
		s.initBuckets(p)
	}
	b := n.free
	n.bucket = b
	p.buckets[b][n.pidx>>6] |= 1 << (uint(n.pidx) & 63)
	p.bucketN[b]++
	p.freeAvail += n.free
	p.usable++
	n.capCounted = n.valid.count() // n.gpus, less fenced GPUs
	p.capUsable += n.capCounted
	s.topoCount(n, +1)
}

// place finds nodes for j on free GPUs: for each of its nodes the usable node
// with the fewest free GPUs that still holds the request (node order on a
// tie), and on each node the GPUs given by gpuSet.choose.
func (s *Scheduler) place(p *partition, j *job) ([]Alloc, []*node, bool) {
	g := j.GPUsPerNode
	if j.Nodes > p.usable {
		return nil, nil, false
	}
	if allocs, nodes, ok, handled := s.placeTopo(p, j); handled {
		return allocs, nodes, ok
	}
	var picked []*node
	// The node holding its checkpoint first, when it has room.
	pref := s.nodeByName[j.PreferNode]
	if pref != nil && (pref.part != p || !pref.usable() || !s.holds(pref, j) || !pref.hasLabels(j) || !pref.takes(j)) {
		pref = nil
	}
	if pref != nil {
		picked = append(picked, pref)
	}
	for f := g; f <= p.maxGPUs && len(picked) < j.Nodes; f++ {
		if p.bucketN[f] == 0 {
			continue
		}
		for w, word := range p.buckets[f] {
			for word != 0 && len(picked) < j.Nodes {
				b := bits.TrailingZeros64(word)
				word &^= 1 << uint(b)
				n := p.nodes[w*64+b]
				if n != pref && s.holds(n, j) && n.hasLabels(j) && n.takes(j) {
					picked = append(picked, n)
				}
			}
			if len(picked) == j.Nodes {
				break
			}
		}
	}
	if len(picked) < j.Nodes {
		return nil, nil, false
	}
	allocs := make([]Alloc, len(picked))
	for i, n := range picked {
		allocs[i] = Alloc{Node: n.cfg.Name, GPUs: s.chooseGPUs(n, s.avail(n), g)}
	}
	return allocs, picked, true
}

// holds says whether what place may use on n holds one node's part of j.
func (s *Scheduler) holds(n *node, j *job) bool {
	if n.free < j.GPUsPerNode {
		return false
	}
	if s.masked(n) && (s.avail(n).count() < j.GPUsPerNode || j.Exclusive && !n.mask.isEmpty()) {
		return false // reserved GPUs it may not use (an Exclusive job would keep them all)
	}
	c, m := s.roomOn(n)
	return fitsCPU(j, c, m)
}

// shortOf says what keeps j from free room: ReasonCPUs when enough usable
// nodes have its GPUs free but too few of them its CPUs, ReasonMemory when
// enough have its GPUs and CPUs free but too few its memory, else
// ReasonResources (GPUs, or a rule that is not about one node). It costs a
// look at every node, and is asked only for a job about to be reported
// blocked.
func (s *Scheduler) shortOf(p *partition, j *job) Reason {
	if j.Exclusive && s.idleShort(p, j) {
		return ReasonNoIdleNodes
	}
	if s.topoWaiting(p, j) {
		return ReasonTopologyWaiting
	}
	if !p.accounts {
		if s.fragmented(p, j) {
			return ReasonFragmented
		}
		return ReasonResources
	}
	gpu, cpu, mem := 0, 0, 0
	for _, n := range p.nodes {
		if !n.usable() || n.free < j.GPUsPerNode {
			continue
		}
		gpu++
		if fitsCPU(j, n.cpuFree(), -1) {
			cpu++
			if fitsCPU(j, -1, n.memFree()) {
				mem++
			}
		}
	}
	switch {
	case gpu < j.Nodes:
		if s.fragmented(p, j) {
			return ReasonFragmented
		}
		return ReasonResources
	case cpu < j.Nodes:
		return ReasonCPUs
	case mem < j.Nodes:
		return ReasonMemory
	}
	return ReasonResources
}

// fragmented says whether the free GPUs of p's usable nodes hold j in
// total but too few nodes have its GPUs per node free (issue 13 item 7:
// qstat then says Fragmented, not Resources). Without labels it reads the
// free-count buckets, O(GPUs per node); with labels it looks at every node.
func (s *Scheduler) fragmented(p *partition, j *job) bool {
	if j.total() == 0 || p.freeAvail < j.total() {
		return false
	}
	fit := 0
	if len(j.Labels) == 0 {
		for f := j.GPUsPerNode; f <= p.maxGPUs; f++ {
			fit += p.bucketN[f]
		}
	} else {
		for _, n := range p.nodes {
			if n.usable() && n.free >= j.GPUsPerNode && n.hasLabels(j) {
				fit++
			}
		}
	}
	return fit < j.Nodes
}

// recountAccounts notes whether any node of p accounts CPUs or memory.
func recountAccounts(p *partition) {
	p.accounts = false
	for _, n := range p.nodes {
		if n.cpus > 0 || n.mem > 0 {
			p.accounts = true
			return
		}
	}
}

// placeFree is place for a job that may also wait for its nomination: it
// finds free GPUs only when there are enough of them in total.
func (s *Scheduler) placeFree(p *partition, j *job) ([]Alloc, []*node, bool) {
	if p.freeAvail < j.total() {
		return nil, nil, false
	}
	return s.place(p, j)
}

// hold makes j's allocations busy on their nodes and counts its GPUs for its
// share.
func (s *Scheduler) hold(j *job) {
	j.gpuN = 0
	j.blocked = nil
	for i, n := range j.anodes {
		n.held = n.held.or(setOf(j.allocs[i].GPUs))
		if j.Exclusive {
			b := n.valid.or(setOf(j.allocs[i].GPUs))
			j.blocked = append(j.blocked, b)
			n.excl++
			j.gpuN += b.count() // charged the whole node (exclusive.go)
		} else {
			j.gpuN += len(j.allocs[i].GPUs)
		}
		rc, rm := n.reqOn(j)
		n.usedCPU += rc
		n.usedMem += rm
		n.jobs = append(n.jobs, j)
	}
	if j.state == Preempting {
		s.setLeaving(j, true)
	}
	if j.state == Preempting {
		s.shareAdd(j.share, shareDelta{pre: j.gpuN})
	} else {
		s.shareAdd(j.share, shareDelta{run: j.gpuN})
	}
	j.runIdx = len(j.share.running)
	j.share.running = append(j.share.running, j)
	s.userAdd(j, +1, j.gpuN, userHeld)
}

// unhold frees j's allocations (nodes are refreshed) and uncounts its GPUs.
func (s *Scheduler) unhold(j *job) {
	if len(j.anodes) > 0 && j.anodes[0].part != nil && j.anodes[0].part.cfg.CheckpointsLocal {
		j.PreferNode = j.anodes[0].cfg.Name // where its checkpoint stays
	}
	if j.state == Preempting {
		s.setLeaving(j, false)
	}
	if nm := j.victimOf; nm != nil {
		nm.victims = removeJob(nm.victims, j)
		j.victimOf = nil
	}
	for i, n := range j.anodes {
		n.held = n.held.andNot(setOf(j.allocs[i].GPUs))
		if j.Exclusive {
			n.excl--
		}
		rc, rm := n.reqOn(j)
		n.usedCPU -= rc
		n.usedMem -= rm
		for k, x := range n.jobs {
			if x == j {
				n.jobs = append(n.jobs[:k], n.jobs[k+1:]...)
				break
			}
		}
		s.nodeRefresh(n)
		if n.part != nil {
			n.part.dirty = true
		}
	}
	if j.state == Preempting {
		s.shareAdd(j.share, shareDelta{pre: -j.gpuN})
	} else {
		s.shareAdd(j.share, shareDelta{run: -j.gpuN})
	}
	s.userAdd(j, -1, j.gpuN, userHeld)
	if p := s.parentOf(j); p != nil {
		p.arr.running = removeJob(p.arr.running, j)
	}
	r := j.share.running
	last := r[len(r)-1]
	r[j.runIdx] = last
	last.runIdx = j.runIdx
	j.share.running = r[:len(r)-1]
	if sh := j.share; sh.part != nil {
		sh.part.dirty = true
	}
	j.allocs, j.anodes, j.gpuN, j.blocked = nil, nil, 0, nil
}

// setLeaving marks (or unmarks) what a preempting job holds as leaving: it
// is free once the job exits, and any preemptor may count the part that no
// nomination holds (n.spare) instead of choosing new victims. The caller
// refreshes the nodes.
func (s *Scheduler) setLeaving(j *job, on bool) {
	for i, n := range j.anodes {
		g := j.keeps(i) // an Exclusive job's whole node leaves with it
		c, m := n.reqOn(j)
		if on {
			n.leaving = n.leaving.or(g)
			n.leaveCPU += c
			n.leaveMem += m
		} else {
			n.leaving = n.leaving.andNot(g)
			n.leaveCPU -= c
			n.leaveMem -= m
		}
	}
}

// shareDelta is a change of a share's GPU counters (share.run, pre, nom).
type shareDelta struct {
	run, pre, nom int
}

// shareAdd changes a share's GPU counters and keeps its partition's totals
// (pool usage, RESERVE idle quota, shares over quota) right.
func (s *Scheduler) shareAdd(sh *share, d shareDelta) {
	p := sh.part
	if p != nil {
		s.shareTotals(p, sh, -1)
	}
	sh.run += d.run
	sh.pre += d.pre
	sh.nom += d.nom
	s.markRates(sh)
	if p != nil {
		s.shareTotals(p, sh, +1)
	}
}

func (s *Scheduler) shareTotals(p *partition, sh *share, sign int) {
	e, q := sh.eff(), sh.quota()
	if sh.reserve() {
		if q > e {
			p.reserveIdle += sign * (q - e)
		}
	} else {
		p.nonRUsed += sign * e
	}
	if e > q {
		p.overQuota += sign
	}
}
