package sched

import "sort"

// Preemption.
//
// tryPreempt is called for a job that could not start on free GPUs:
//
//   - Cross-share reclaim: when the job fits inside its share's quota
//     (usage + request <= quota), it may take GPUs back from running jobs of
//     other shares that are over their own quota at the moment each victim
//     is taken; the preempting share must end at or under its quota.
//   - In-share preemption, when the share enables it and reclaim alone found
//     nothing: victims are running jobs of the job's own share with strictly
//     lower priority, together with cross-share victims when the job fits
//     inside its quota, or would once those lower-priority jobs are gone
//     (victims of other shares are taken first; the share must then end
//     within its quota). The share
//     may end over its quota only if it is LEND_AND_BORROW and within its
//     borrow limit.
//   - A job whose request exceeds its share's quota never preempts, but
//     for fair share (fairpreempt.go): a borrower may preempt other shares'
//     jobs wholly beyond their quota (fairVictimOK); its victims are taken
//     from the share that borrows most per weight first.
//   - An Exclusive job (place=excl) takes a node only when every job on it
//     is a victim or already leaving (exclusive.go).
//   - Non-RESERVE shares together never hold more than the partition's pool
//     (capacity minus RESERVE quotas), so RESERVE shares' idle quota is never
//     used by others; a within-quota job whose start would break this
//     reclaims enough GPUs from over-quota shares even when free GPUs exist.
//
// The victim order (the one place it is defined; README's "Preemption"
// section repeats it): running jobs of other shares before the job's own
// share's, then jobs marked idle (JobIdle, idle.go) before busy ones, then
// the lowest priority, then the fewest earlier preemptions (so
// that the pain is spread: a job preempted before is spared while an equal
// one was not), then the most recently started, then the highest Seq, then
// the id (a fair-share preemption puts the share that borrows most per
// weight before the others). Jobs started in the same Schedule call, and jobs already leaving,
// are never candidates.
//
// Victims are chosen placement-aware. For one node per job: every usable
// node that hosts a candidate is tried; on each, candidates are taken in
// victim order until free GPUs, plus the spare GPUs of jobs already
// leaving (preempting jobs' GPUs that no nomination holds, whichever
// preemptor they leave for, so that every waiting preemptor counts them
// before choosing new victims), plus the victims' GPUs hold the request;
// then victims not needed are put back in reverse order. The node whose set is cheapest
// wins: fewest in-share victims, then fewest busy (not idle) victims, then
// lowest highest victim priority, fewest
// victims, fewest GPUs, fewest earlier preemptions of its victims, victims
// earliest in victim order, node order. For N nodes the best node is chosen
// N times in a row; since that is greedy (a victim spanning several nodes
// frees them all at once), each of the first maxSeeds candidates that
// spans several nodes also seeds such a search with it taken, and the
// cheapest whole victim set (the same cost, over all nodes) wins. More victims are then added in victim order only if the
// quota or pool rules need them, and put-back passes in reverse order, repeated
// while one drops a victim, drop every victim the result does not need. When
// the result of a reclaim with in-share preemption mixes other shares' jobs
// and the share's own (taken for the quota rule), a search among its own
// jobs alone is tried too, and the cheaper set wins. An Exclusive job
// counts the GPUs of its chosen nodes (search.charge). All or nothing.
//
// The chosen GPUs (free, spare and the victims') are nominated for the job:
// nobody else gets them, and the job starts once every victim has exited
// and no chosen GPU is held any more (nor the CPUs and memory of the jobs
// still leaving there); if free GPUs elsewhere hold it first (and its share
// stays within quota counting its jobs still leaving, and within its quota
// or borrow limit counting its other preemptors' nominations too), it
// starts there instead and its victims go on leaving as spare GPUs.
// Jobs started in the same Schedule call are never victims. Within a pass,
// a share that failed a search does not search again for a
// request at least as large.
func (s *Scheduler) tryPreempt(p *partition, sh *share, j *job) bool {
	g := j.charge()
	if g > sh.quota() || g == 0 {
		return false
	}
	within := sh.usage()+g <= sh.quota()
	if within && !sh.failCross.covers(j) {
		if p.overQuota > 0 || p.spare > 0 {
			if ok, _ := s.preempt(p, sh, j, searchReclaim); ok {
				return true
			}
		}
		sh.failCross = failed(j, maxPriority)
	}
	if sh.cfg.InSharePreemption && !sh.failIn.covers(j) {
		// Reclaim goes with in-share preemption when the share would be
		// within its quota once its lower-priority jobs are preempted
		// (issue 13 item 4): the search then takes the smallest combined
		// set, and the quota rule checks the share ends within quota.
		mode := searchInShare
		cross := within
		if !cross && p.overQuota > 0 {
			lower := 0
			for _, v := range sh.running {
				if v.state == Running && v.Priority < j.Priority && v.startGen != s.gen {
					lower += v.gpuN
				}
			}
			cross = sh.usage()+g-lower <= sh.quota()
		}
		if cross {
			mode = searchInShareReclaim
		}
		if ok, _ := s.preempt(p, sh, j, mode); ok {
			return true
		}
		sh.failIn = failed(j, j.Priority)
	}
	return false
}

// searchMode is which running jobs a victim search (preempt) may take,
// and so which rules it follows.
type searchMode uint8

const (
	// searchReclaim: cross-share reclaim, other shares' jobs while their
	// share is over its quota.
	searchReclaim searchMode = iota
	// searchInShare: in-share preemption, the share's own jobs of lower
	// priority.
	searchInShare
	// searchInShareReclaim: both, other shares' jobs first.
	searchInShareReclaim
	// searchFair: fair-share preemption, other shares' jobs wholly beyond
	// their quota (fairpreempt.go).
	searchFair
)

// crossShare says whether the mode takes over-quota jobs of other shares
// (reclaim).
func (m searchMode) crossShare() bool { return m == searchReclaim || m == searchInShareReclaim }

// inShare says whether the mode takes the share's own lower-priority jobs.
func (m searchMode) inShare() bool { return m == searchInShare || m == searchInShareReclaim }

// search is one victim search.
type search struct {
	s      *Scheduler
	p      *partition
	sh     *share
	j      *job
	cands  []*job
	taken  []bool
	by     map[*share]int // GPUs taken from each share
	sel    []int          // taken candidates, in the order taken
	chosen []*node
	forFit bool         // free GPUs hold the job in total, not on its nodes
	pos    map[*job]int // candidate positions (Exclusive preemptors; candIdx)
	mode   searchMode
	final  float64 // fair: the preemptor's share's borrowed GPUs per weight once it starts
	// keepOff: the victims' GPUs that the masks of the reservations
	// binding the job hold do not count (a fair-share preemption that
	// found such reservations: unlike an owner's reclaim, it does not come
	// before them).
	keepOff bool
}

type cost struct {
	inShare, busy, maxPrio, count, gpus, prior, rank, pidx int
}

func (a cost) less(b cost) bool {
	switch {
	case a.inShare != b.inShare:
		return a.inShare < b.inShare
	case a.busy != b.busy: // idle victims before busy ones (idle.go)
		return a.busy < b.busy
	case a.maxPrio != b.maxPrio:
		return a.maxPrio < b.maxPrio
	case a.count != b.count:
		return a.count < b.count
	case a.gpus != b.gpus:
		return a.gpus < b.gpus
	case a.prior != b.prior:
		return a.prior < b.prior
	case a.rank != b.rank:
		return a.rank < b.rank
	}
	return a.pidx < b.pidx
}

// gpusOn is what victim v frees on n for the search (freesOn), and the
// CPUs and memory it holds there.
func (se *search) gpusOn(v *job, n *node) (int, int, int64) {
	for i, x := range v.anodes {
		if x == n {
			c, m := n.reqOn(v)
			return se.s.freesOn(v, i, se.keepOff), c, m
		}
	}
	return 0, 0, 0
}

// freesOn is how many GPUs victim v frees on its i-th node: its own there
// (an Exclusive victim frees its whole node), less, with keepOff, those
// the masks of the reservations binding the preemptor hold.
func (s *Scheduler) freesOn(v *job, i int, keepOff bool) int {
	g := len(v.allocs[i].GPUs)
	if v.Exclusive {
		g = v.keeps(i).count()
	}
	if n := v.anodes[i]; keepOff && g > 0 && s.masked(n) && !n.mask.isEmpty() {
		g -= v.keeps(i).and(n.mask).count()
	}
	return g
}

// fair says whether the search is a fair-share preemption.
func (se *search) fair() bool { return se.mode == searchFair }

// canTake says whether the rules let the search take candidate i besides
// the victims taken so far.
func (se *search) canTake(i int) bool {
	return se.takeOK(se.cands[i], se.by[se.cands[i].share])
}

// canTakeFresh is canTake for a search with nothing taken yet.
func (se *search) canTakeFresh(i int) bool {
	return se.takeOK(se.cands[i], 0)
}

// takeOK says whether victim v may be taken when taken GPUs of its share
// are taken already: its share must stay over its quota (reclaim), or
// beyond it borrowing at least final per weight (fair share); the
// preemptor's own share's jobs (in-share) always may.
func (se *search) takeOK(v *job, taken int) bool {
	if se.fair() {
		return fairVictimOK(v.share, taken+v.gpuN, se.final)
	}
	if v.share == se.sh {
		return true
	}
	x := v.share
	return x.eff()-taken > x.quota()
}

func (se *search) take(i int) {
	se.taken[i] = true
	se.by[se.cands[i].share] += se.cands[i].gpuN
}

func (se *search) untake(i int) {
	se.taken[i] = false
	se.by[se.cands[i].share] -= se.cands[i].gpuN
}

// room returns what n offers the job with the victims taken so far: GPUs,
// CPUs and memory (-1: not accounted). That is what stays once every
// preempting job has exited and every nomination has started: free GPUs,
// plus the GPUs of preempting jobs that no nomination holds (n.spare,
// whichever preemptor they leave for), plus the taken victims'; CPUs and
// memory likewise (nominations count in full, preempting jobs not at all).
// Each GPU counts once.
//
// Where n does not account CPUs (or memory) the room is unaccountedRoom,
// so that the arithmetic on it stays exact elsewhere: a negative room (the
// reservations' CPUs masked off, or a node that reported fewer CPUs than
// its jobs hold) is no room, never "not accounted".
func (se *search) room(n *node) (int, int, int64) {
	s := se.s
	g := s.freeOn(n) + n.spare
	cpu, mem := unaccountedRoom, int64(unaccountedRoom)
	if n.cpus > 0 {
		cpu = n.cpus - (n.usedCPU - n.leaveCPU) - n.nomCPU
	}
	if n.mem > 0 {
		mem = n.mem - (n.usedMem - n.leaveMem) - n.nomMem
	}
	if s.masked(n) {
		if n.cpus > 0 {
			cpu -= n.maskCPU
		}
		if n.mem > 0 {
			mem -= n.maskMem
		}
	}
	for _, i := range se.sel { // the victims taken so far
		dg, dc, dm := se.gpusOn(se.cands[i], n)
		g, cpu, mem = g+dg, cpu+dc, mem+dm
	}
	return g, cpu, mem
}

// unaccountedRoom is a search's CPU and memory room on a node that does not
// account them: more than any job asks.
const unaccountedRoom = 1 << 40

// fits says whether the room holds the job; the room comes from room
// (never -1: a negative room is short).
func (se *search) fits(g, cpu int, mem int64) bool {
	if g < se.j.GPUsPerNode || cpu < 0 || mem < 0 && se.j.MemPerNode > 0 {
		return false
	}
	return fitsCPU(se.j, cpu, mem)
}

// fitsOn is fits on node n: an Exclusive preemptor needs n clear of
// everything but its victims (clearFor).
func (se *search) fitsOn(n *node, g, cpu int, mem int64) bool {
	return se.fits(g, cpu, mem) && (!se.j.Exclusive || se.clearFor(n, g))
}

// evalNode finds the victims n needs (beyond those already taken), without
// keeping them taken.
func (se *search) evalNode(n *node, onNode []int) (cost, []int, bool) {
	g, cpu, mem := se.room(n)
	var local []int
	for _, i := range onNode {
		if se.fitsOn(n, g, cpu, mem) {
			break
		}
		if se.taken[i] || !se.canTake(i) {
			continue
		}
		se.take(i)
		local = append(local, i)
		dg, dc, dm := se.gpusOn(se.cands[i], n)
		g, cpu, mem = g+dg, cpu+dc, mem+dm
	}
	ok := se.fitsOn(n, g, cpu, mem)
	if ok {
		for k := len(local) - 1; k >= 0; k-- {
			i := local[k]
			dg, dc, dm := se.gpusOn(se.cands[i], n)
			var fit bool
			if se.j.Exclusive {
				// clearFor reads what is taken: ask with i put back.
				se.untake(i)
				if fit = se.fitsOn(n, g-dg, cpu-dc, mem-dm); !fit {
					se.take(i)
				}
			} else if fit = se.fits(g-dg, cpu-dc, mem-dm); fit {
				se.untake(i)
			}
			if fit {
				g, cpu, mem = g-dg, cpu-dc, mem-dm
				local = append(local[:k], local[k+1:]...)
			}
		}
	}
	c := se.costOf(local)
	c.pidx = n.pidx
	for _, i := range local {
		se.untake(i)
	}
	return c, local, ok
}

func (se *search) chosenFit() bool {
	for _, n := range se.chosen {
		if g, cpu, mem := se.room(n); !se.fitsOn(n, g, cpu, mem) {
			return false
		}
	}
	return true
}

// charge is what the preemptor counts for the quota and pool rules and
// its nomination: for an Exclusive job whose nodes are chosen, their GPUs
// (issue 30 item 3: counting the partition's largest node, job.charge,
// took victims for GPUs it would never hold, which then started again on
// the GPUs they had left); otherwise job.charge.
func (se *search) charge() int {
	if j := se.j; j.Exclusive && len(se.chosen) == j.Nodes {
		return exclKeeps(se.chosen)
	}
	return se.j.charge()
}

// finalOK checks the quota and pool rules for the current selection.
func (se *search) finalOK() bool {
	inV, nonRV, cross := 0, 0, false
	for _, i := range se.sel {
		v := se.cands[i]
		if v.share == se.sh {
			inV += v.gpuN
		} else {
			cross = true
		}
		if !v.share.reserve() {
			nonRV += v.gpuN
		}
	}
	g := se.charge()
	sh, p := se.sh, se.p
	e, q := sh.usage()+g-inV-se.ownSpare(), sh.quota()
	if cross && e > q && !se.fair() {
		return false
	}
	if e > q {
		if bc := sh.borrowCap(); bc == 0 || (bc > 0 && e-q > bc) {
			return false
		}
	}
	if !sh.reserve() {
		if d := g - nonRV; d > 0 && p.nonRUsed+d > p.poolCap() {
			return false
		}
	}
	return true
}

// ownSpare is how many GPUs of the preemptor's own share's jobs already
// leaving, that no nomination holds, the job must take on its chosen
// nodes: those jobs count in the share's usage (share.pre) until they
// exit, but the job waits for them to exit before it starts there, so
// the quota rule does not count them twice (issue 30 item 3: a
// PriorityChanged released a preemptor's nomination while its victims
// were exiting; the next search took another running job for the quota
// alone, and it restarted where it was). Only the GPUs the job cannot
// avoid count: per node, what it needs beyond the free GPUs, the taken
// victims' and other spare GPUs. Once a nomination holds them they are
// no longer spare, so no two preemptors count the same GPUs.
func (se *search) ownSpare() int {
	if se.j.Exclusive || se.p.spare == 0 {
		return 0
	}
	credit := 0
	for _, n := range se.chosen {
		if n.spare == 0 {
			continue
		}
		own := 0
		for _, v := range n.jobs {
			if v.state != Preempting || v.share != se.sh || v.Exclusive {
				continue
			}
			for k, x := range v.anodes {
				if x == n {
					own += v.keeps(k).andNot(n.nominated).count()
				}
			}
		}
		own = min(own, n.spare)
		have := se.s.freeOn(n) + n.spare - own
		for _, i := range se.sel {
			dg, _, _ := se.gpusOn(se.cands[i], n)
			have += dg
		}
		if need := se.j.GPUsPerNode - have; need > 0 {
			credit += min(need, own)
		}
	}
	return credit
}

// preempt searches victims for j of sh among the running jobs mode allows
// and nominates them; nominated says whether it did. masked says whether
// reservations that bind j kept it off their GPUs: free GPUs reserved for a
// job ahead of it are not free to it (it preempts elsewhere rather than
// count them, reservation.go); its victims' GPUs it takes whatever is
// reserved (reclaim comes first), but for a fair-share preemption
// (keepOff).
func (s *Scheduler) preempt(p *partition, sh *share, j *job, mode searchMode) (nominated, masked bool) {
	fair := mode == searchFair
	if masked = s.buildMasks(p, j, needOf(sh, j)); masked {
		s.masking = true
		defer func() { s.masking = false }()
	}
	var cands []*job
	var final float64
	if fair {
		final = borrowedPerWeight(sh, sh.usage()+j.charge())
		cands = s.fairCandidates(p, sh, final)
		if !s.exhaustive && s.fairHopeless(p, j, cands, final) {
			s.cutShort++
			return false, masked
		}
	}
	if mode.crossShare() {
		for _, x := range p.shares {
			if x == sh || x.eff() <= x.quota() {
				continue
			}
			for _, v := range x.running {
				if v.state == Running && v.startGen != s.gen {
					cands = append(cands, v)
				} else if v.state == Running {
					// Started in this call: not preempted in the call
					// that started it, but j must be looked at again in
					// the next one (nothing else may make its share
					// dirty: j became eligible in a later round).
					sh.redirty = true
				}
			}
		}
	}
	if mode.inShare() {
		for _, v := range sh.running {
			if v.state == Running && v.Priority < j.Priority && v.startGen != s.gen {
				cands = append(cands, v)
			} else if v.state == Running && v.Priority < j.Priority {
				sh.redirty = true
			}
		}
	}
	if len(cands) == 0 && (p.spare == 0 || fair) {
		return false, masked
	}
	sort.Slice(cands, func(a, b int) bool {
		x, y := cands[a], cands[b]
		if xo, yo := x.share != sh, y.share != sh; xo != yo {
			return xo
		}
		if xi, yi := x.idle(), y.idle(); xi != yi {
			return xi // idle jobs first (idle.go)
		}
		if fair && x.share != y.share {
			// The share that borrows most per weight first.
			if bx, by := borrowedPerWeight(x.share, x.share.eff()), borrowedPerWeight(y.share, y.share.eff()); bx != by {
				return bx > by
			}
		}
		if x.Priority != y.Priority {
			return x.Priority < y.Priority
		}
		if x.Order != y.Order {
			return x.Order < y.Order
		}
		if x.Preemptions != y.Preemptions {
			return x.Preemptions < y.Preemptions
		}
		if !x.started.Equal(y.started) {
			return x.started.After(y.started)
		}
		if x.Seq != y.Seq {
			return x.Seq > y.Seq
		}
		return x.ID < y.ID
	})
	best, forFit := s.searchVictims(p, sh, j, mode, cands, final, fair && masked)
	if best != nil && mode == searchInShareReclaim && best.mixed() {
		// Issue 30 item 3: the cheapest node took another share's job,
		// and the reclaim rule then asked for the share's own jobs to
		// bring it within its quota; its own jobs alone, on another
		// node, may cost less (found by the needless-victim oracle: the
		// other share's job started again at once on the GPUs it left).
		var own []*job
		for _, v := range cands {
			if v.share == sh {
				own = append(own, v)
			}
		}
		if alt, _ := s.searchVictims(p, sh, j, mode, own, final, false); alt != nil && alt.setCost().less(best.setCost()) {
			best = alt
		}
	}
	if best == nil {
		return false, masked
	}
	best.forFit = best.forFit || forFit
	return s.nominate(best), masked
}

// mixed says whether the search took victims of other shares and of the
// preemptor's own share.
func (se *search) mixed() bool {
	own, other := false, false
	for _, i := range se.sel {
		if se.cands[i].share == se.sh {
			own = true
		} else {
			other = true
		}
	}
	return own && other
}

// searchVictims is preempt's search over cands (sorted in victim order):
// the cheapest complete victim set, or nil; forFit says whether free GPUs
// held j in total (its nomination is for a fit).
func (s *Scheduler) searchVictims(p *partition, sh *share, j *job, mode searchMode, cands []*job, final float64, keepOff bool) (best *search, forFit bool) {
	newSearch := func() *search {
		return &search{s: s, p: p, sh: sh, j: j, cands: cands, taken: make([]bool, len(cands)), by: map[*share]int{}, mode: mode, final: final, keepOff: keepOff}
	}
	// Candidates per node, in victim order.
	byNode := map[*node][]int{}
	for i, v := range cands {
		for _, n := range v.anodes {
			if n.part == p && n.usable() {
				byNode[n] = append(byNode[n], i)
			}
		}
	}
	se := newSearch()
	if _, nodes, ok := s.place(p, j); ok {
		// Free GPUs hold the job; only the pool rule asks for victims.
		se.chosen = nodes
		if !se.complete() {
			return nil, false
		}
		return se, false
	}
	// Fragmentation (issue 13 item 7): the victims are needed only
	// because the free GPUs are split across nodes.
	forFit = s.freeFor(p) >= j.total()
	var nodes []*node
	if j.Nodes == 1 {
		for n := range byNode {
			nodes = append(nodes, n)
		}
		if p.spare > 0 {
			for _, n := range p.nodes {
				if n.spare > 0 && n.usable() && byNode[n] == nil {
					nodes = append(nodes, n)
				}
			}
		}
	} else {
		for _, n := range p.nodes {
			if n.usable() {
				nodes = append(nodes, n)
			}
		}
	}
	sort.Slice(nodes, func(a, b int) bool { return nodes[a].pidx < nodes[b].pidx })
	if tbest, required := s.topoSearch(p, j, nodes, byNode, newSearch); tbest != nil || required {
		if tbest != nil {
			tbest.forFit = forFit
		}
		return tbest, forFit
	}
	if se.pickNodes(nodes, byNode) && se.complete() {
		best = se
	}
	if j.Nodes > 1 {
		// Node by node is greedy: a victim that spans several nodes frees
		// them all at once, which the first pick does not see (issue 13
		// item 5). Each such candidate (the first maxSeeds in victim
		// order) seeds another search; the cheapest whole set wins.
		seeds := 0
		for i, v := range cands {
			if seeds >= maxSeeds {
				break
			}
			if len(v.anodes) < 2 || !se.canTakeFresh(i) {
				continue
			}
			seeds++
			alt := newSearch()
			alt.take(i)
			alt.sel = append(alt.sel, i)
			if alt.pickNodes(nodes, byNode) && alt.complete() && (best == nil || alt.setCost().less(best.setCost())) {
				best = alt
			}
		}
	}
	if best != nil {
		best.forFit = forFit
	}
	return best, forFit
}

// maxSeeds bounds the extra searches of a multi-node preemptor (one per
// candidate victim spanning several nodes).
const maxSeeds = 8

// pickNodes chooses the job's nodes, the cheapest node (victims beyond
// those taken) each time; false when too few nodes can hold it.
func (se *search) pickNodes(nodes []*node, byNode map[*node][]int) bool {
	j := se.j
	for len(se.chosen) < j.Nodes {
		var best *node
		var bestCost cost
		var bestSel []int
		for _, n := range nodes {
			if containsNode(se.chosen, n) || !n.fitsDeclared(j) {
				continue
			}
			c, local, ok := se.evalNode(n, byNode[n])
			if ok && (best == nil || c.less(bestCost)) {
				best, bestCost, bestSel = n, c, local
			}
		}
		if best == nil {
			return false
		}
		for _, i := range bestSel {
			se.take(i)
			se.sel = append(se.sel, i)
		}
		se.chosen = append(se.chosen, best)
	}
	return true
}

// setCost is the cost of the whole selection (node order does not count).
func (se *search) setCost() cost { return se.costOf(se.sel) }

// costOf is the cost of victims sel (candidate indices), node order 0.
func (se *search) costOf(sel []int) cost {
	c := cost{maxPrio: -1}
	for _, i := range sel {
		v := se.cands[i]
		if v.share == se.sh {
			c.inShare++
		}
		if !v.idle() {
			c.busy++
		}
		c.maxPrio = max(c.maxPrio, v.Priority)
		c.count++
		c.gpus += v.gpuN
		c.prior += v.Preemptions
		c.rank = max(c.rank, i)
	}
	return c
}

// complete adds victims the quota and pool rules need, in victim order,
// then puts back, in reverse order, every victim the result does not
// need, round after round until none can go; false when the rules cannot
// be met.
func (se *search) complete() bool {
	cands := se.cands
	// Quota and pool rules.
	for !se.finalOK() {
		found := false
		for i := range cands {
			if !se.taken[i] && se.canTake(i) {
				se.take(i)
				se.sel = append(se.sel, i)
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	// Put back every victim not needed, in reverse order, and again while
	// a round puts one back: a victim put back late may have been what
	// made earlier ones needed (issue 30 item 3: another share's job taken
	// for room made the reclaim rule ask for the share's own jobs to bring
	// it within its quota; once that job was put back the share could end
	// over its quota, borrowing, but its own jobs stayed victims and
	// started again at once on the GPUs they had left).
	for again := true; again; {
		again = false
		for k := len(se.sel) - 1; k >= 0; k-- {
			i := se.sel[k]
			se.untake(i)
			se.sel = append(se.sel[:k], se.sel[k+1:]...)
			if se.chosenFit() && se.finalOK() {
				again = true
				continue
			}
			se.take(i)
			se.sel = append(se.sel[:k], append([]int{i}, se.sel[k:]...)...)
		}
	}
	return true
}

// nominate reserves the chosen GPUs for the job and sends its victims
// SIGTERM (Plan.Preempts).
func (s *Scheduler) nominate(se *search) bool {
	j, p, sh := se.j, se.p, se.sh
	nm := &nomination{j: j, part: p, forFit: se.forFit}
	waits := false // on GPUs of jobs already leaving
	for _, n := range se.chosen {
		avail := s.avail(n).or(n.leaving.andNot(n.nominated))
		for _, i := range se.sel {
			v := se.cands[i]
			for k, x := range v.anodes {
				if x == n {
					g := v.keeps(k)
					if se.keepOff && s.masked(n) {
						g = g.andNot(n.mask) // reserved: see search.gpusOn
					}
					avail = avail.or(g)
				}
			}
		}
		gpus := s.chooseGPUs(n, avail, j.GPUsPerNode)
		if len(gpus) != j.GPUsPerNode {
			return false // the search's room and the GPUs disagree: never start short
		}
		if !setOf(gpus).and(n.leaving).isEmpty() {
			waits = true
		}
		nm.allocs = append(nm.allocs, Alloc{Node: n.cfg.Name, GPUs: gpus})
		nm.nodes = append(nm.nodes, n)
	}
	if len(se.sel) == 0 && (!waits || se.fair()) {
		return false
	}
	var keep func(*reservation) bool // reclaim comes first
	if se.fair() {
		keep = func(r *reservation) bool { return s.binds(r, j, mustBorrow) }
	}
	s.overtake(j, nm.nodes, nm.allocs, keep)
	for k, n := range nm.nodes {
		n.nominated = n.nominated.or(setOf(nm.allocs[k].GPUs))
		rc, rm := n.reqOn(j)
		n.nomCPU += rc
		n.nomMem += rm
		if j.Exclusive {
			n.exclNom++ // the whole node is its (exclusive.go)
		}
	}
	sel := append([]int(nil), se.sel...)
	sort.Ints(sel)
	for _, i := range sel {
		v := se.cands[i]
		kind := CrossShare
		switch {
		case se.fair():
			kind = FairShare
		case v.share == sh:
			kind = InShare
		}
		s.plan.Preempts = append(s.plan.Preempts, Preemption{Victim: v.ID, For: j.ID, Kind: kind, Grace: s.grace(v)})
		s.shareAdd(v.share, shareDelta{run: -v.gpuN, pre: v.gpuN})
		v.state = Preempting
		v.victimOf = nm
		nm.victims = append(nm.victims, v)
		s.setLeaving(v, true)
		for _, n := range v.anodes {
			s.nodeRefresh(n)
		}
	}
	for _, n := range nm.nodes {
		s.nodeRefresh(n)
	}
	nm.charge = se.charge()
	s.shareAdd(sh, shareDelta{nom: nm.charge})
	s.userAdd(j, +1, nm.charge, userNominated)
	j.nom = nm
	p.noms = append(p.noms, nm)
	s.queueRemove(j)
	s.setReason(j, nm.reason())
	return true
}
