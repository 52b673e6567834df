package sched

// neverFitsNow says whether j can never start in its share: it asks for more
// GPUs than the share's quota plus its allowed borrowing, more GPUs (or CPUs,
// memory) per node than any node of the partition declares, or more such
// nodes (with the labels it selects) than the partition has.
func (s *Scheduler) neverFitsNow(j *job) bool {
	sh := j.share
	if sh == nil || sh.removed || sh.part == nil {
		return false
	}
	if bc := sh.borrowCap(); bc >= 0 && j.total() > sh.quota()+bc {
		return true
	}
	p := sh.part
	if j.CPUsPerNode <= 1 && j.MemPerNode == 0 && len(j.Labels) == 0 {
		// Every node that accounts CPUs has at least one.
		return j.GPUsPerNode >= len(p.atLeast) || p.atLeast[j.GPUsPerNode] < j.Nodes
	}
	n := 0
	for _, nd := range p.nodes {
		if nd.fitsDeclared(j) {
			if n++; n >= j.Nodes {
				return false
			}
		}
	}
	return true
}

// computeAtLeast recounts, per GPU count, the partition's nodes declaring
// at least that many GPUs.
func computeAtLeast(p *partition) {
	mx := 0
	for _, n := range p.nodes {
		mx = max(mx, n.gpus)
	}
	p.atLeast = make([]int, mx+1)
	for _, n := range p.nodes {
		p.atLeast[n.gpus]++
	}
	for g := mx - 1; g >= 0; g-- {
		p.atLeast[g] += p.atLeast[g+1]
	}
}

// checkNeverFits sets the system hold on a pending entry that can never fit
// (when hold is set) and releases the hold the core set once it fits.
func (s *Scheduler) checkNeverFits(j *job, hold bool) {
	nf := s.neverFitsNow(j)
	p := j.share.part
	switch {
	case nf && j.neverFits:
		if p != nil && !containsJob(p.neverFits, j) {
			p.neverFits = append(p.neverFits, j)
		}
	case nf && hold && j.Hold&HoldSystem == 0:
		j.neverFits = true
		j.Hold |= HoldSystem
		if p != nil {
			p.neverFits = append(p.neverFits, j)
		}
	case !nf && j.neverFits:
		j.neverFits = false
		j.Hold &^= HoldSystem
		if p != nil {
			p.neverFits = removeJob(p.neverFits, j)
		}
	}
}

// recheckNeverFits releases the system holds of a partition's jobs that fit
// now (after a node came up with more GPUs).
func (s *Scheduler) recheckNeverFits(p *partition) {
	list := append([]*job(nil), p.neverFits...)
	for _, j := range list {
		if j.gone || j.state != Pending || !j.neverFits {
			p.neverFits = removeJob(p.neverFits, j)
			continue
		}
		s.checkNeverFits(j, false)
		s.refresh(j)
	}
}

func containsJob(list []*job, j *job) bool {
	for _, x := range list {
		if x == j {
			return true
		}
	}
	return false
}
