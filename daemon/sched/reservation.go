package sched

import (
	"sort"
	"time"
)

// Reservations and EASY backfill (issue 14 item 1), on when Config.Backfill
// is set.
//
// Walltimes. A job runs at most its Walltime, or its partition's
// DefaultWalltime when it names none; with neither it may run forever. A
// running job is expected to free its GPUs at its start plus that walltime
// (a job past it, or one being preempted or killed, frees them now: it is
// about to end). A nomination's GPUs are expected free once its preemptor
// has run its walltime from now. The core never looks at how long a job
// really runs: only the walltime in its record counts.
//
// Who gets a reservation. In each share, the first job that fits inside the
// share's quota but is blocked for room (GPUs, CPUs, memory, or a
// reservation ahead of it) gets one; so does the first blocked borrower of
// the partition (by the borrowers' order) unless its borrow limit or its
// share's strategy is what stops it; and each share's first job that does
// not fit its quota headroom (headresv.go). A reservation is a start time and a
// set of nodes and GPUs: for every node that can hold the job, the time
// when enough of its GPUs (and CPUs and memory) are expected free, counting
// GPUs reserved for earlier reservations busy until those reserved jobs are
// expected to end; the job's nodes are the ones with the earliest times
// (node order on a tie) and its start the latest of theirs. On each node
// it takes GPUs that are busy now before GPUs that are free now, so that
// free GPUs stay open to backfill. When some node the job needs is never
// expected free (jobs without walltime), no reservation is made and the
// share (or the borrowers) wait as without backfill.
//
// What a reservation binds. A job that would still run at a reservation's
// start may not use the reservation's GPUs, nor the CPUs and memory the
// reserved job counts on its nodes, if the reservation is ahead of it: a
// reservation of a within-quota job binds the later jobs of its share (in
// queue order), the within-quota jobs of other shares submitted after it
// (Seq), and every borrower; a borrower's reservation binds the borrowers
// after it (by Seq; under fair share every other borrower, the reserved one
// being the one whose turn it was), and the later jobs of its share (queue
// order); a share's first over-headroom job's (own) reservation binds only
// its share's later jobs. A job that ends before the start may use them (it is
// backfilled). Within its share, the quota headroom a reserved job needs
// is kept for it the same way. Reclaim is never bound: an owner taking
// back lent GPUs preempts as before, on any GPUs, and nominated preemptors
// start on their GPUs whatever is reserved (the reservation is computed
// again at the next pass). A job that would fit but for the reserved
// GPUs, or the quota or borrowing kept for a reserved job of its share,
// waits with ReasonBackfillWouldDelay.
//
// Only one job per share reserves (EASY, not conservative backfill): the
// jobs blocked behind it start when they fit around it, and do not hold
// the share. Among borrowers, the first blocked one and up to
// maxExtraResv more reserve, each around the ones before it
// (borrowresv.go). A job that a reservation does not bind still keeps off
// its GPUs when it can start elsewhere now (placeBF), so that it does not
// push the reservation later for nothing.
//
// Lifetime. Reservations are computed again whenever the pass looks at
// their share again (every share after a capacity change); the others
// stay. A reservation ends when its job starts, leaves the queue or goes.
//
// Cost. Computing one costs a look at each of the partition's nodes and the
// jobs on it; a pass computes at most one per share and one for the
// borrowers. Placing a job around reservations costs the nodes of the
// reservations that bind it, then a placement as usual (tight fit, from the
// free-count buckets; a node with reserved GPUs is tried in the bucket of
// its free count and skipped when what is left does not hold the job).

// overtake drops the reservations that j, about to hold allocs from now
// on, runs into (it holds some of their GPUs past their start), except
// those keep says it honours; their shares are looked at again in the
// next pass. Reclaim (a nominated preemptor) and a job no reservation binds
// may take reserved GPUs; a reservation is never left promising GPUs that
// somebody holds past its start.
func (s *Scheduler) overtake(j *job, nodes []*node, allocs []Alloc, keep func(*reservation) bool) {
	end := s.endFrom(j, s.now)
	for k, n := range nodes {
		if len(n.resvs) == 0 {
			continue
		}
		g := setOf(allocs[k].GPUs)
		if j.Exclusive {
			g = n.valid // it keeps the whole node
		}
		for i := len(n.resvs) - 1; i >= 0; i-- {
			if i >= len(n.resvs) {
				continue
			}
			r := n.resvs[i]
			if r.j == j || !r.start.Before(end) || (keep != nil && keep(r)) {
				continue
			}
			for m, y := range r.nodes {
				if y == n && !r.gpus[m].and(g).isEmpty() {
					rj := r.j
					s.unreserve(rj)
					s.markDirty(rj.share)
					break
				}
			}
		}
	}
}

// forever stands for "never" in expected times: the end of a job without
// walltime.
var forever = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// reservation holds GPUs (and the CPUs and memory its job counts) on some
// nodes for a blocked job from start on.
type reservation struct {
	j      *job
	part   *partition
	start  time.Time
	end    time.Time // start + the job's walltime; forever without one
	kind   resvKind
	rank   uint64 // creation order: an extra binds the borrowers whose reservation is younger
	nodes  []*node
	gpus   []gpuSet // per node
	allocs []Alloc
}

// resvKind is whom a reservation is for, which decides whom it binds
// (binds).
type resvKind uint8

const (
	// resvBlocked: a share's first within-quota job blocked for room
	// (tryWithin).
	resvBlocked resvKind = iota
	// resvHead: a share's first over-headroom job (headresv.go); it binds
	// only its share's later jobs.
	resvHead
	// resvBorrower: the partition's first blocked borrower (p.bresv).
	resvBorrower
	// resvExtra: a borrower reservation besides the partition's first
	// (borrowresv.go).
	resvExtra
)

// borrower says whether the reservation is a borrower's.
func (k resvKind) borrower() bool { return k == resvBorrower || k == resvExtra }

// walltime is what j may run: its own walltime, or its partition's
// default; 0 = no limit.
func (s *Scheduler) walltime(j *job) time.Duration {
	if j.Walltime > 0 {
		return j.Walltime
	}
	if j.share != nil && j.share.part != nil {
		return j.share.part.cfg.DefaultWalltime
	}
	return 0
}

// endFrom is when j would end if it started at t.
func (s *Scheduler) endFrom(j *job, t time.Time) time.Time {
	w := s.walltime(j)
	if w <= 0 || !t.Before(forever) {
		return forever
	}
	if e := t.Add(w); e.Before(forever) {
		return e
	}
	return forever
}

// rawEnd is expectedEnd before taking the later of it and now: long past
// (time.Time{}) for a job about to end.
func (s *Scheduler) rawEnd(x *job) time.Time {
	if x.state != Running {
		return time.Time{}
	}
	return s.endFrom(x, x.started)
}

// expectedEnd is when a job holding GPUs is expected to free them.
func (s *Scheduler) expectedEnd(x *job) time.Time {
	if x.state != Running {
		return s.now // being preempted or killed: about to end
	}
	e := s.endFrom(x, x.started)
	if e.Before(s.now) {
		return s.now
	}
	return e
}

// unreserve drops j's reservation, if it has one.
func (s *Scheduler) unreserve(j *job) {
	r := j.resv
	if r == nil {
		return
	}
	j.resv = nil
	for _, n := range r.nodes {
		for i, x := range n.resvs {
			if x == r {
				n.resvs = append(n.resvs[:i], n.resvs[i+1:]...)
				break
			}
		}
		s.resvIndexTouch(n)
	}
	p := r.part
	for i, x := range p.resvs {
		if x == r {
			p.resvs = append(p.resvs[:i], p.resvs[i+1:]...)
			break
		}
	}
	if p.bresv == r {
		p.bresv = nil
	}
	if sh := j.share; sh != nil {
		if sh.resv == r {
			sh.resv = nil
		}
		if sh.xresv == r {
			sh.xresv = nil
		}
	}
}

// dropScanned drops, at the start of a pass, the reservations the pass
// makes again: those of the shares it looks at (every one when full).
func (s *Scheduler) dropScanned(p *partition, full bool) {
	for i := len(p.resvs) - 1; i >= 0; i-- {
		if i >= len(p.resvs) {
			continue
		}
		r := p.resvs[i]
		if full || r.j.share == nil || r.j.share.inScan || r.j.gone || r.j.state != Pending {
			s.unreserve(r.j)
		}
	}
}

// quotaNeed says whether a job is tried within its share's quota or must
// borrow beyond it: reservations bind the two differently (binds), and a
// borrower's reservation binds differently from others.
type quotaNeed bool

const (
	withinQuota quotaNeed = false
	mustBorrow  quotaNeed = true
)

// needOf is what j of sh needs to start now.
func needOf(sh *share, j *job) quotaNeed {
	return sh.usage()+j.charge() > sh.quota()
}

// binds says whether reservation r is ahead of x, which needs what need
// says, so that x may not delay it. Under fair share the borrowers' order
// is not submission order: the reserved borrower, whose turn it was, is
// ahead of every other.
func (s *Scheduler) binds(r *reservation, x *job, need quotaNeed) bool {
	if r.j == x {
		return false
	}
	if (r.kind == resvHead || r.kind.borrower()) && x.share == r.j.share && queueLess(r.j, x) {
		return true // later jobs of its own share, within quota or not
	}
	if r.kind == resvHead {
		return false
	}
	if r.kind.borrower() {
		if need != mustBorrow {
			return false
		}
		if r.kind == resvExtra {
			return x != r.part.bresv.job() && (x.resv == nil || !x.resv.kind.borrower() || x.resv.rank > r.rank)
		}
		return s.cfg.FairShare || seqBefore(r.j, x)
	}
	if x.share == r.j.share {
		return queueLess(r.j, x)
	}
	return need == mustBorrow || seqBefore(r.j, x)
}

// job is r's job; nil for no reservation.
func (r *reservation) job() *job {
	if r == nil {
		return nil
	}
	return r.j
}

func seqBefore(a, b *job) bool {
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.ID < b.ID
}

// shortFor says whether x, started now, ends by r's start.
func (s *Scheduler) shortFor(x *job, r *reservation) bool {
	return !s.endFrom(x, s.now).After(r.start)
}

// headroomQ is the quota headroom sh keeps for its blocked jobs, as j sees
// it: a job that ends before the share's reservation starts may use the
// reserved job's part.
func (s *Scheduler) headroomQ(sh *share, j *job) int {
	q := sh.reservedQ
	if r := sh.resv; r != nil && sh.resvQ > 0 && (r.j == j || s.shortFor(j, r)) {
		q -= sh.resvQ
	}
	return q - claimNotBinding(sh, j)
}

// headroomB is headroomQ for the borrow limit.
func (s *Scheduler) headroomB(sh *share, j *job) int {
	q := sh.reservedB
	r := sh.part.bresv
	if r == nil || r.j.share != sh {
		r = sh.xresv
	}
	if r != nil && r.j != j && r.j.share == sh && sh.resvB > 0 && s.shortFor(j, r) {
		q -= sh.resvB
	}
	return q
}

// placeBF is place for a job the partition's reservations may bind: it
// keeps off the GPUs, CPUs and memory of every reservation ahead of j
// whose start j would still be running at. masked says whether any did.
func (s *Scheduler) placeBF(p *partition, j *job, need quotaNeed) (allocs []Alloc, nodes []*node, ok, masked bool) {
	if s.buildSoftMasks(p, j, need) {
		// Keep off the reservations that do not bind it too, when it
		// can: a reservation it does not have to honour is not run
		// into (dropped and moved later) for nothing.
		if allocs, nodes, ok = s.placeMasked(p, j); ok {
			return allocs, nodes, true, false
		}
	}
	if !s.buildMasks(p, j, need) {
		allocs, nodes, ok = s.place(p, j)
		return allocs, nodes, ok, false
	}
	allocs, nodes, ok = s.placeMasked(p, j)
	return allocs, nodes, ok, true
}

// placeMasked is place keeping off the masks just built.
func (s *Scheduler) placeMasked(p *partition, j *job) ([]Alloc, []*node, bool) {
	s.masking = true
	allocs, nodes, ok := s.place(p, j)
	s.masking = false
	return allocs, nodes, ok
}

// masked says whether n has a mask that place, avail and a victim search
// keep off now: one of maskGen, while masking.
func (s *Scheduler) masked(n *node) bool {
	return s.masking && n.maskGen == s.maskGen
}

// buildSoftMasks marks on the nodes, as buildMasks does, every reservation
// but j's own whose start j would still be running at, when some of them
// does not bind j; false (nothing marked) otherwise.
func (s *Scheduler) buildSoftMasks(p *partition, j *job, need quotaNeed) bool {
	if len(p.resvs) == 0 {
		return false
	}
	end := s.endFrom(j, s.now)
	soft := false
	for _, r := range p.resvs {
		if r.j != j && r.start.Before(end) && !s.binds(r, j, need) {
			soft = true
			break
		}
	}
	if !soft {
		return false
	}
	s.maskGen++
	s.maskedNodes = s.maskedNodes[:0]
	for _, r := range p.resvs {
		if r.j != j && r.start.Before(end) {
			s.maskResv(r)
		}
	}
	return true
}

// maskResv adds r's GPUs, CPUs and memory to its nodes' masks of maskGen.
func (s *Scheduler) maskResv(r *reservation) {
	for k, n := range r.nodes {
		if n.maskGen != s.maskGen {
			n.maskGen = s.maskGen
			n.mask, n.maskCPU, n.maskMem = gpuSet{}, 0, 0
			s.maskedNodes = append(s.maskedNodes, n)
		}
		n.mask = n.mask.or(r.gpus[k])
		c, m := n.reqOn(r.j)
		n.maskCPU += c
		n.maskMem += m
	}
}

// buildMasks marks on the nodes (for maskGen) the GPUs, CPUs and memory of
// the reservations ahead of j whose start j would still be running at;
// false when there are none.
func (s *Scheduler) buildMasks(p *partition, j *job, need quotaNeed) bool {
	if len(p.resvs) == 0 {
		return false
	}
	end := s.endFrom(j, s.now)
	s.maskGen++
	s.maskedNodes = s.maskedNodes[:0]
	masked := false
	for _, r := range p.resvs {
		if !r.start.Before(end) || !s.binds(r, j, need) {
			continue
		}
		masked = true
		s.maskResv(r)
	}
	return masked
}

// freeFor is p.freeAvail less the reserved GPUs the current mask keeps
// the job off.
func (s *Scheduler) freeFor(p *partition) int {
	if !s.masking {
		return p.freeAvail
	}
	f := p.freeAvail
	for _, n := range s.maskedNodes { // the nodes with a mask of maskGen
		if n.part == p && s.masked(n) && n.bucket >= 0 {
			f -= n.free - s.freeOn(n)
		}
	}
	return f
}

// freeOn is n.free less the reserved GPUs the current mask keeps the job
// off.
func (s *Scheduler) freeOn(n *node) int {
	if !s.masked(n) || n.free == 0 {
		return n.free
	}
	return s.avail(n).count()
}

// avail is what place (and a victim search) may use on n: its free GPUs,
// less those of the reservations placeBF keeps j off.
func (s *Scheduler) avail(n *node) gpuSet {
	a := n.valid.andNot(n.held).andNot(n.nominated)
	if s.masked(n) {
		a = a.andNot(n.mask)
	}
	return a
}

// roomOn is what place may use on n besides GPUs: free CPUs and memory (-1:
// not accounted), less the reservations' placeBF keeps j off.
func (s *Scheduler) roomOn(n *node) (int, int64) {
	c, m := n.cpuFree(), n.memFree()
	if s.masked(n) {
		if c >= 0 {
			c = max(0, c-n.maskCPU)
		}
		if m >= 0 {
			m = max(0, m-n.maskMem)
		}
	}
	return c, m
}

// reserveFor computes a reservation of the kind for j and keeps it; nil
// when some node j needs is never expected free.
func (s *Scheduler) reserveFor(p *partition, j *job, kind resvKind) *reservation {
	return s.reserveFrom(p, j, kind, s.now)
}

// reserveFrom is reserveFor for a start not before nb.
func (s *Scheduler) reserveFrom(p *partition, j *job, kind resvKind, nb time.Time) *reservation {
	s.unreserve(j)
	k := j.Nodes
	best := make([]resvCand, 0, k)     // the k earliest, by time then node order
	nodes := s.topoResvNodes(p, j, nb) // a required domain's nodes only (topology.go)
	if !s.topoBound(p, j) {
		if cands, ok := s.indexedCands(p, j, nb); ok {
			best, nodes = cands, nil // the index chose (resvindex.go)
		}
	}
	for _, n := range nodes {
		if !n.usable() || !n.fitsDeclared(j) {
			continue
		}
		t, ok := s.nodeTime(n, j)
		if t.Before(nb) {
			t = nb
		}
		if !ok || (len(best) == k && !t.Before(best[k-1].t)) {
			continue
		}
		i := len(best)
		if i < k {
			best = append(best, resvCand{})
		} else {
			i = k - 1
		}
		for i > 0 && t.Before(best[i-1].t) {
			best[i] = best[i-1]
			i--
		}
		best[i] = resvCand{n, t}
	}
	if len(best) < k {
		return nil
	}
	start := best[k-1].t
	sort.Slice(best, func(a, b int) bool { return best[a].n.pidx < best[b].n.pidx })
	if pref := s.nodeByName[j.PreferNode]; pref != nil && pref.part == p && !containsCand(best, pref) && !s.topoBound(p, j) {
		// The node holding its checkpoint instead of the last one, when it
		// is as early.
		if t, ok := s.nodeTime(pref, j); ok && pref.usable() && pref.fitsDeclared(j) && !t.After(start) {
			if t.Before(nb) {
				t = nb
			}
			best[len(best)-1] = resvCand{pref, t}
			sort.Slice(best, func(a, b int) bool { return best[a].n.pidx < best[b].n.pidx })
		}
	}
	g := j.GPUsPerNode
	s.resvRank++
	r := &reservation{j: j, part: p, start: start, end: s.endFrom(j, start), kind: kind, rank: s.resvRank}
	for _, c := range best {
		rel := s.relWith(c.n)
		var busy, free gpuSet
		for i, t := range rel {
			switch {
			case t.After(start):
			case t.After(s.now):
				busy.set(i)
			default:
				free.set(i)
			}
		}
		var pick []int
		if busy.count() >= g {
			pick = busy.choose(c.n.gpus, g)
		} else {
			pick = append(busy.list(), free.choose(c.n.gpus, g-busy.count())...)
			sortInts(pick)
		}
		r.nodes = append(r.nodes, c.n)
		if j.Exclusive {
			r.gpus = append(r.gpus, c.n.valid) // it keeps the whole node
		} else {
			r.gpus = append(r.gpus, setOf(pick))
		}
		r.allocs = append(r.allocs, Alloc{Node: c.n.cfg.Name, GPUs: pick})
		c.n.resvs = append(c.n.resvs, r)
		s.resvIndexTouch(c.n)
	}
	j.resv = r
	p.resvs = append(p.resvs, r)
	return r
}

// resvCand is a node a reservation may use, and when.
type resvCand struct {
	n *node
	t time.Time
}

func containsCand(list []resvCand, n *node) bool {
	for _, c := range list {
		if c.n == n {
			return true
		}
	}
	return false
}

// relProfile is what a node's running jobs and nominations are expected to
// give back, and when. Its times do not depend on now: a GPU free now, or
// held by a job about to end, reads as long past (time.Time{}), and a
// running job past its walltime as the end it passed; readers take the
// later of a time and now. So it is kept across Schedule calls until the
// node changes (nodeRefresh drops it) or an event changes what it is made
// of without touching the node (s.profEpoch: walltimes, configuration,
// cancellations); a node with a nomination on it is made again at every
// call (a nomination is expected free its preemptor's walltime from now).
type relProfile struct {
	gen    uint64
	epoch  uint64
	stable bool        // made without nominations: valid while epoch holds
	rel    []time.Time // per GPU index: when it is expected free (forever: not a GPU)
	sorted []time.Time // rel, ascending
	holds  []relHold   // what holders count of CPUs and memory, by end
}

// relHold is one holder's CPUs and memory on a node, and its expected end.
type relHold struct {
	end time.Time
	cpu int
	mem int64
}

// profile returns n's release profile, computing it when stale.
func (s *Scheduler) profile(n *node) *relProfile {
	pr := &n.prof
	if pr.gen != 0 && (pr.gen == s.gen || pr.stable && pr.epoch == s.profEpoch && n.nominated.isEmpty()) {
		return pr
	}
	pr.gen, pr.epoch, pr.stable = s.gen, s.profEpoch, true
	s.resvIndexTouch(n)
	pr.rel = pr.rel[:0]
	for i := 0; i < n.gpus; i++ {
		if n.valid.has(i) {
			pr.rel = append(pr.rel, time.Time{})
		} else {
			pr.rel = append(pr.rel, forever)
		}
	}
	pr.holds = pr.holds[:0]
	accounts := n.cpus > 0 || n.mem > 0
	for _, x := range n.jobs {
		e := s.rawEnd(x)
		for k, y := range x.anodes {
			if y == n {
				later(pr.rel, x.keeps(k), e)
			}
		}
		if accounts {
			c, m := n.reqOn(x)
			pr.holds = append(pr.holds, relHold{e, c, m})
		}
	}
	if n.part != nil {
		// A nomination's GPUs: free once its preemptor has run its
		// walltime from now.
		for _, nm := range n.part.noms {
			for k, y := range nm.nodes {
				if y != n {
					continue
				}
				e := s.endFrom(nm.j, s.now)
				pr.stable = false
				later(pr.rel, setOf(nm.allocs[k].GPUs), e)
				if accounts {
					c, m := n.reqOn(nm.j)
					pr.holds = append(pr.holds, relHold{e, c, m})
				}
			}
		}
	}
	pr.sorted = append(pr.sorted[:0], pr.rel...)
	sortTimes(pr.sorted)
	sort.Slice(pr.holds, func(a, b int) bool { return pr.holds[a].end.Before(pr.holds[b].end) })
	return pr
}

// later moves the expected free time of the GPUs in gs to e when later.
func later(rel []time.Time, gs gpuSet, e time.Time) {
	for i := range rel {
		if gs.has(i) && e.After(rel[i]) {
			rel[i] = e
		}
	}
}

func sortTimes(a []time.Time) {
	for i := 1; i < len(a); i++ {
		for k := i; k > 0 && a[k].Before(a[k-1]); k-- {
			a[k], a[k-1] = a[k-1], a[k]
		}
	}
}

// relWith is n's profile with the reservations on it counted busy until
// their jobs are expected to end.
func (s *Scheduler) relWith(n *node) []time.Time {
	pr := s.profile(n)
	rel := append([]time.Time(nil), pr.rel...)
	for _, r := range n.resvs {
		for k, y := range r.nodes {
			if y == n {
				later(rel, r.gpus[k], r.end)
			}
		}
	}
	return rel
}

// nodeTime is when n is expected to hold one node's part of j: enough GPUs,
// CPUs and memory, counting reservations busy until their jobs end; false
// when never.
func (s *Scheduler) nodeTime(n *node, j *job) (time.Time, bool) {
	pr := s.profile(n)
	g := j.GPUsPerNode
	if j.Exclusive {
		g = len(pr.rel) // an idle node: every GPU free
	}
	if g > len(pr.rel) {
		return forever, false
	}
	t := s.now
	if len(n.resvs) == 0 {
		if g > 0 {
			t = pr.sorted[g-1]
		}
	} else {
		rel := append(s.relBuf[:0], pr.rel...)
		for _, r := range n.resvs {
			for k, y := range r.nodes {
				if y == n {
					later(rel, r.gpus[k], r.end)
				}
			}
		}
		sortTimes(rel)
		s.relBuf = rel
		if g > 0 {
			t = rel[g-1]
		}
	}
	if !t.Before(forever) {
		return forever, false
	}
	if t.Before(s.now) {
		t = s.now
	}
	c, m := n.reqOn(j)
	if c == 0 && m == 0 {
		return t, true
	}
	// CPUs and memory: the earliest time at which enough of what the
	// holders (and reservations) count is expected back.
	holds := append(s.holdBuf[:0], pr.holds...)
	for _, r := range n.resvs {
		rc, rm := n.reqOn(r.j)
		holds = append(holds, relHold{r.end, rc, rm})
	}
	if len(n.resvs) > 0 {
		sort.Slice(holds, func(a, b int) bool { return holds[a].end.Before(holds[b].end) })
	}
	s.holdBuf = holds
	usedC, usedM := 0, int64(0)
	for _, h := range holds {
		usedC += h.cpu
		usedM += h.mem
	}
	fits := func() bool { return (c == 0 || n.cpus-usedC >= c) && (m == 0 || n.mem-usedM >= m) }
	tc := s.now
	for _, h := range holds {
		if fits() {
			break
		}
		usedC -= h.cpu
		usedM -= h.mem
		tc = h.end
	}
	if !fits() || !tc.Before(forever) {
		return forever, false
	}
	if tc.After(t) {
		t = tc
	}
	return t, true
}

// Estimate is a reserved job's expected start and the nodes and GPUs
// reserved for it (PBS's estimated.start_time and estimated.exec_vnode).
type Estimate struct {
	Start  time.Time
	Allocs []Alloc
}

func (r *reservation) estimate() *Estimate {
	e := &Estimate{Start: r.start}
	for _, a := range r.allocs {
		e.Allocs = append(e.Allocs, Alloc{Node: a.Node, GPUs: append([]int(nil), a.GPUs...)})
	}
	return e
}

// Estimates returns every reserved job's estimate, by job.
func (s *Scheduler) Estimates() map[JobID]Estimate {
	out := map[JobID]Estimate{}
	for _, p := range s.parts {
		for _, r := range p.resvs {
			out[r.j.ID] = *r.estimate()
		}
	}
	return out
}
