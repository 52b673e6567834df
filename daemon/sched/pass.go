package sched

import "time"

// lookahead is how many jobs of distinct request shapes one share's pass
// examines without starting them before it stops looking further down that
// share's queue; the jobs beyond keep (or get) ReasonPriority: jobs ahead of
// them are waiting. A job whose shape (nodes, GPUs, CPUs and memory per
// node; its array; labels) equals one the pass already examined in its
// share and could not start is passed over without being tried (it cannot
// do better: within a pass room only shrinks), and costs no lookahead, up to
// maxSkips such jobs per share and pass; so a small job behind many
// blocked big ones of one shape is still looked at (issue 13 item 6).
const (
	lookahead = 16
	maxSkips  = 32
)

// shape is what decides whether a job can start, but for its priority.
type shape struct {
	h                 uint64 // a hash of the rest (shapecache.go), compared first
	nodes, gpus, cpus int
	mem               int64
	excl              bool            // place=excl places differently
	wall              time.Duration   // with backfill a shorter job may fit where a longer one did not
	group             JobID           // its array; a job with labels stands alone
	user              string          // in a share with per-user rules
	topo              TopologyRequest // placed by topology (a bounded wait stands alone: topology.go)
}

func (s *Scheduler) freshShape(j *job) shape {
	k := shape{nodes: j.Nodes, gpus: j.GPUsPerNode, cpus: j.CPUsPerNode, mem: j.MemPerNode, excl: j.Exclusive}
	if s.cfg.Backfill {
		k.wall = s.walltime(j)
	}
	if j.share != nil && j.share.q.perUser {
		k.user = j.User
	}
	switch {
	case j.arr != nil || len(j.Labels) > 0:
		k.group = j.ID
	case j.sub:
		k.group = j.parent
	}
	if k.topo = j.Topology; k.topo.Wait > 0 {
		k.group = j.ID // required or not by its own wait
	}
	return k
}

// pass runs one scheduling pass over a partition. It looks at every share
// when capacity changed (p.dirty), otherwise only at shares whose queue
// changed.
//
// Phase 1 goes through the jobs that fit inside their share's quota (eff +
// request <= quota; usage counts the share's jobs still being preempted), across shares by submission order (Seq) and within a
// share in queue order (priority, then Seq): each starts on free GPUs, or
// reclaims GPUs by preemption, or is blocked. Phase 2 then goes through the
// jobs that must borrow, across shares by Seq, or under fair share one job
// at a time from the share with the lowest fair key (fairshare.go).
//
// A blocked job keeps later (lower) jobs of its share from delaying it: a
// within-quota job blocked for room (GPUs, CPUs, memory) stops the share's
// pass there: no later job of the share starts in this pass (without
// run-time limits any start could delay it), and the share borrows nothing
// more; one blocked only by pool room reserved for a job ahead reserves its
// size of the quota headroom. A blocked borrower reserves its borrowing
// against the share's borrow limit and, unless the borrow limit is what
// stops it, claims its GPUs of the partition's lendable ones for the rest
// of the pass (issue 13 rule 3: idle lendable GPUs go to borrowers in
// submission order across shares, as AWS Batch's FIFO idle-capacity
// assignment does): a later borrower of any share that would fit without
// the claims but not with them gets ReasonPriority. Jobs that were not
// looked at keep (or get) ReasonPriority.
func (s *Scheduler) pass(p *partition) {
	full := p.dirty
	p.dirty, p.anyDirty = false, false
	var scan []*share
	for _, sh := range p.shares {
		if sh.removed || (!full && !sh.dirty) {
			sh.dirty = false
			continue
		}
		sh.dirty = false
		s.firstCursor(sh)
		sh.budget = lookahead
		sh.p1Done, sh.p1Headroom = false, false
		sh.cands, sh.candPos = sh.cands[:0], 0
		sh.seen, sh.skips, sh.skippedCand = sh.seen[:0], 0, false
		sh.reservedQ, sh.reservedB, sh.reservedP = 0, 0, 0
		sh.failCross, sh.failIn, sh.failFair = nil, nil, nil
		sh.blockedWQ = false
		sh.holdAll = false
		sh.blockedPrio = -1
		sh.redirty = false
		sh.scanned = sh.scanned[:0]
		sh.inScan = true
		sh.resvQ, sh.resvB = 0, 0
		sh.claimJ, sh.claimQ = nil, 0
		sh.claimWait = false
		scan = append(scan, sh)
	}
	if len(scan) == 0 {
		s.recheckClaims(p)
		return
	}
	// Each pass is its own scan (a Schedule call may pass over a
	// partition more than once): a job examined again in a later pass of
	// the same call is listed again, so that the pass after forgets no
	// reason it set.
	s.scanSeq++
	if len(p.resvs) > 0 {
		s.dropScanned(p, full)
	}
	p.claimed, p.soonKnown = 0, false
	borrowed := false // a job started borrowing in phase 2

	// Phase 1: within quota.
	h := newShareHeap(func(sh *share) heapKey { return heapKey{seq: sh.cur.job().Seq} })
	for _, sh := range scan {
		if s.next1(sh) {
			h.add(sh)
		}
	}
	h.init()
	for h.len() > 0 {
		sh := h.top()
		j := sh.cur.job()
		if sh.usage()+j.charge() > sh.quota() {
			s.reserveHead(p, sh, j)
			s.claimHeadroom(sh, j)
			sh.cands = append(sh.cands, j)
			// Jobs of its shape behind it wait for it (Priority): it is
			// tried among the borrowers.
			s.examinedAs(sh, j, ReasonPriority)
			sh.cur.next()
		} else {
			started := s.tryWithin(p, sh, j)
			if !started || !j.inReady {
				if !started {
					s.examined(sh, j)
				}
				sh.cur.next()
			}
		}
		if s.next1(sh) {
			h.fixTop()
		} else {
			h.pop()
		}
	}

	if s.cfg.Backfill && s.cfg.FairShare {
		s.keepSticky(p)
	}

	// Phase 2: borrowing; under fair share the share with the lowest fair
	// key first (fairshare.go), else by submission order.
	key2 := func(sh *share) heapKey { return heapKey{seq: s.cand2(sh).Seq} }
	if s.cfg.FairShare {
		key2 = func(sh *share) heapKey {
			j := s.cand2(sh)
			return heapKey{fair: s.fairKey(sh) - s.waitCredit(sh, j), seq: j.Seq}
		}
	}
	h = newShareHeap(key2)
	for _, sh := range scan {
		if s.next2(sh) {
			h.add(sh)
		}
	}
	h.init()
	for h.len() > 0 {
		sh := h.top()
		j := s.cand2(sh)
		fromCursor := sh.candPos >= len(sh.cands)
		need := needOf(sh, j)
		started := s.tryBorrow(p, sh, j)
		borrowed = borrowed || started && need == mustBorrow
		if !started || !j.inReady {
			if fromCursor {
				if !started {
					s.examined(sh, j)
				}
				sh.cur.next()
			} else {
				sh.candPos++
			}
		}
		if s.next2(sh) {
			h.fixTop()
		} else {
			h.pop()
		}
	}

	for _, sh := range scan {
		sh.inScan = false
		for _, j := range sh.lastScanned {
			if j.scanGen != s.scanSeq && !j.gone && j.state == Pending && j.inReady && j.share == sh {
				s.setReason(j, ReasonPriority)
			}
		}
		sh.lastScanned, sh.scanned = sh.scanned, sh.lastScanned
		if sh.redirty {
			s.markDirty(sh)
		}
	}
	if borrowed {
		for _, sh := range p.shares {
			if sh.blockedWQ {
				p.dirty = true
				break
			}
		}
	}
	s.recheckClaims(p)
}

// recheckClaims marks for the next pass the shares of p whose job waits
// on other borrowers' claims when a job of p started after that wait was
// decided (later in the same pass, or since: a pass that did not look at
// the share, a nominated job's start): the start took idle GPUs, so a
// claim that kept the job waiting may no longer be met within claimWindow
// (claim.go), or was made by a share that pass did not look at. Without
// it the job kept its FairShare or Priority beside idle lendable GPUs
// until some other change looked at its share.
func (s *Scheduler) recheckClaims(p *partition) {
	if p.starts == 0 {
		return
	}
	for _, sh := range p.shares {
		if sh.claimWait && (sh.claimWaitScan != s.scanSeq || p.starts > sh.claimWaitAt) {
			sh.claimWait = false
			s.markDirty(sh)
		}
	}
	p.starts = 0
}

// examined notes that a pass looked at j without starting it.
func (s *Scheduler) examined(sh *share, j *job) { s.examinedAs(sh, j, j.reason) }

// examinedAs is examined, r being the reason for later jobs of j's shape.
func (s *Scheduler) examinedAs(sh *share, j *job, r Reason) {
	sh.budget--
	if j.nom != nil {
		return // it preempts: a job of its shape behind it may too
	}
	if k := s.shapeOf(j); seenReason(sh.seen, k) == ReasonNone {
		sh.seen = append(sh.seen, seenShape{k, r})
	}
	if j.scanGen != s.scanSeq {
		j.scanGen = s.scanSeq
		sh.scanned = append(sh.scanned, j)
	}
}

// skipGone moves a share's cursor past entries no longer pending, and past
// jobs of a shape the pass already examined in the share (up to maxSkips;
// they get the reason the examined one got).
func (s *Scheduler) skipGone(sh *share) {
	c := &sh.cur
	s.refix(sh)
	for c.valid() {
		j := c.job()
		if j.inReady && j.state == Pending && j.nom == nil {
			if s.skipUserLimited(sh, j) {
				continue
			}
			if len(sh.seen) == 0 || sh.skips >= maxSkips {
				return
			}
			r := seenReason(sh.seen, s.shapeOf(j))
			if r == ReasonNone {
				return
			}
			sh.skips++
			if sh.usage()+s.chargeOf(j) > sh.quota() {
				sh.skippedCand = true
			}
			s.setReason(j, r)
			if j.scanGen != s.scanSeq {
				j.scanGen = s.scanSeq
				sh.scanned = append(sh.scanned, j)
			}
		}
		c.next()
	}
}

// seenShape is a shape a pass examined in a share, and the reason its job
// got.
type seenShape struct {
	k shape
	r Reason
}

// seenReason is the reason of the examined job of shape k, ReasonNone when
// there is none.
func seenReason(list []seenShape, k shape) Reason {
	for _, x := range list {
		if x.k.h == k.h && x.k == k {
			return x.r
		}
	}
	return ReasonNone
}

// next1 positions a share's cursor on its next phase-1 job; false when
// phase 1 is done with the share.
func (s *Scheduler) next1(sh *share) bool {
	if sh.p1Done {
		return false
	}
	s.skipGone(sh)
	switch {
	case !sh.cur.valid() || sh.budget <= 0 || sh.holdAll:
		sh.p1Done = true
	case sh.usage()+sh.reservedQ-claimNotBinding(sh, sh.cur.job()) >= sh.quota() && sh.cur.job().charge() > 0:
		sh.p1Done, sh.p1Headroom = true, true
	}
	return !sh.p1Done
}

// next2 finds a share's next phase-2 job: the borrowers phase 1 set aside,
// then (when phase 1 stopped for lack of quota headroom) the rest of the
// queue within the budget.
func (s *Scheduler) next2(sh *share) bool {
	for sh.candPos < len(sh.cands) {
		j := sh.cands[sh.candPos]
		if j.inReady && j.state == Pending && j.nom == nil {
			return true
		}
		sh.candPos++
	}
	if !sh.p1Headroom || sh.budget <= 0 {
		return false
	}
	s.skipGone(sh)
	return sh.cur.valid()
}

func (s *Scheduler) cand2(sh *share) *job {
	if sh.candPos < len(sh.cands) {
		return sh.cands[sh.candPos]
	}
	return sh.cur.job()
}

// blocked records a job of sh that could not start for reason r.
func (s *Scheduler) blocked(sh *share, j *job, r Reason) {
	s.setReason(j, r)
	if r != ReasonPriority && r != ReasonArrayLimit && j.Priority > sh.blockedPrio {
		sh.blockedPrio = j.Priority
	}
}

// started notes a start in sh: when a blocked job of higher priority could
// preempt it (in-share preemption), or jobs of a shape that started were
// passed over, the share is looked at again next pass.
func (s *Scheduler) started(sh *share, j *job) {
	if sh.cur.fair {
		sh.cur.stale = true // the user's fair key grows
	}
	if sh.cfg.InSharePreemption && sh.blockedPrio > j.Priority {
		sh.redirty = true
	}
	k := s.shapeOf(j)
	if sh.skippedCand || sh.skips > 0 && seenReason(sh.seen, k) != ReasonNone {
		sh.redirty = true
	}
	// A job of its shape that the pass reaches later is looked at, not
	// passed over: the examined one did start after all (a set-aside
	// borrower that borrowed in phase 2), so one passed over after this
	// start would wait for no pass to come (issue 30 item 4 made that
	// order common).
	for i, x := range sh.seen {
		if x.k == k {
			sh.seen = append(sh.seen[:i], sh.seen[i+1:]...)
			break
		}
	}
}

// ruledOut is what keeps j of sh from starting whatever the room: no
// usable node, its array's limit, its user's limit; ReasonNone when
// nothing does.
func (s *Scheduler) ruledOut(p *partition, sh *share, j *job) Reason {
	switch {
	case p.usable == 0:
		return ReasonNodesDown
	case s.atArrayLimit(j):
		return ReasonArrayLimit
	}
	return userLimit(sh, j)
}

// startPlaced starts j of sh where place put it, keeping (or dropping)
// the reservations as a job of its need may.
func (s *Scheduler) startPlaced(sh *share, j *job, need quotaNeed, allocs []Alloc, nodes []*node) {
	s.started(sh, j)
	if sh.resv != nil && sh.resv.j == j {
		// It takes its headroom now: whichever path starts it (a
		// place=excl job may start by startExclSmall), the quota kept
		// for it must not stay kept (the needless-victim property found
		// a borrower held back by a started exclusive job's headroom).
		sh.reservedQ -= sh.resvQ
		sh.resvQ = 0
	}
	s.dropHeadroomClaim(sh, j)
	s.overtake(j, nodes, allocs, func(r *reservation) bool { return s.binds(r, j, need) })
	s.start(j, allocs, nodes)
}

// tryWithin handles a job that fits inside its share's quota.
func (s *Scheduler) tryWithin(p *partition, sh *share, j *job) bool {
	if r := s.ruledOut(p, sh, j); r != ReasonNone {
		s.blocked(sh, j, r)
		return false
	}
	g := j.charge()
	rq := s.headroomQ(sh, j)
	if sh.usage()+rq+g > sh.quota() {
		r := ReasonPriority
		if sh.resv != nil && sh.resv.j != j && sh.usage()+sh.reservedQ-sh.resvQ+g <= sh.quota() {
			// Only the quota kept for the share's reserved job stops it:
			// it would still run when that one starts.
			r = ReasonBackfillWouldDelay
		}
		s.blocked(sh, j, r)
		return false
	}
	fitsPool := sh.reserve() || g+rq <= p.slack()
	if !fitsPool && j.Exclusive && s.startExclSmall(p, sh, j, rq) {
		return true
	}
	wouldDelay := false
	if fitsPool {
		allocs, nodes, ok, masked := s.placeBF(p, j, withinQuota)
		if ok {
			s.startPlaced(sh, j, withinQuota, allocs, nodes)
			return true
		}
		if masked {
			_, _, wouldDelay = s.place(p, j)
		}
	}
	if s.tryPreempt(p, sh, j) {
		return false
	}
	r := s.shortOf(p, j)
	switch {
	case wouldDelay:
		r = ReasonBackfillWouldDelay
	case !fitsPool && g > p.slack() && r != ReasonNoIdleNodes:
		// The pool cannot hold it (the rest of the free GPUs is RESERVE
		// shares' idle quota, or stands for GPUs leaving jobs still hold):
		// no layout of the free GPUs would start it, so it is not
		// Fragmented, nor short of CPUs or memory. (A place=excl job
		// short of idle nodes keeps NoIdleNodes: that is true too.)
		r = ReasonResources
	}
	if !fitsPool && g <= p.slack() {
		// Only the pool room reserved for a blocked job ahead of it in its
		// share stops it.
		if _, _, ok := s.place(p, j); ok {
			r = ReasonPriority
		}
	}
	s.blocked(sh, j, r)
	sh.blockedWQ = true
	if s.cfg.Backfill && sh.resv != nil {
		// EASY: the share's reserved job is ahead of it; it neither
		// reserves nor holds back the jobs behind it.
		return false
	}
	sh.reservedQ += g
	if r != ReasonPriority {
		// Nothing later in its share may delay it (issue 13 rule 2): with
		// backfill, by a reservation that later jobs fit around; without
		// (or when it cannot be computed: jobs without walltime), no
		// later job of its share starts before it.
		if s.cfg.Backfill {
			if res := s.reserveFor(p, j, resvBlocked); res != nil {
				sh.resv, sh.resvQ = res, g
				return false
			}
		}
		sh.holdAll = true
	}
	return false
}

// tryBorrow handles a job that needs more than its share's idle quota
// (or is within its quota after all: tryWithin); true when it started.
func (s *Scheduler) tryBorrow(p *partition, sh *share, j *job) bool {
	if r := s.ruledOut(p, sh, j); r != ReasonNone {
		s.blocked(sh, j, r)
		return false
	}
	g := j.charge()
	if sh.usage()+g <= sh.quota() {
		return s.tryWithin(p, sh, j)
	}
	if hq := s.headroomQ(sh, j); hq > 0 || sh.holdAll {
		r := ReasonPriority
		if !sh.holdAll && sh.resv != nil && sh.resv.j != j && sh.reservedQ == sh.resvQ {
			r = ReasonBackfillWouldDelay // only the quota kept for its reserved job stops it
		}
		s.blocked(sh, j, r)
		if b := sh.usage() + g - sh.quota(); !sh.holdAll && mayBorrow(sh, b) {
			// Behind its share's reserved job: it may reserve after it.
			s.reserveExtra(p, sh, j, b)
		}
		return false
	}
	if j.Exclusive && s.startExclSmall(p, sh, j, s.headroomQ(sh, j)) {
		return true
	}
	b := sh.usage() + g - sh.quota()
	bc := sh.borrowCap()
	var r Reason
	switch {
	case sh.cfg.Strategy != LendAndBorrow:
		r = ReasonQuota
	case bc >= 0 && b > bc:
		r = ReasonBorrowLimit
	case bc >= 0 && b+s.headroomB(sh, j) > bc:
		r := ReasonPriority
		if br := p.bresv; br != nil && br.j != j && br.j.share == sh && b+sh.reservedB-sh.resvB <= bc {
			r = ReasonBackfillWouldDelay // only the borrowing kept for its reserved borrower stops it
		}
		s.blocked(sh, j, r)
		return false
	case g > p.borrowable():
		r = ReasonQuota
	case g+sh.reservedP > p.borrowable():
		// A borrower ahead in its own share keeps its claim.
		s.blocked(sh, j, ReasonPriority)
		return false
	case g+p.claimed > p.borrowable():
		// A borrower ahead (in submission order, or by fair share, any
		// share) keeps its claim on the lendable GPUs.
		r := ReasonPriority
		if s.cfg.FairShare {
			r = ReasonFairShare
		}
		sh.claimWait, sh.claimWaitScan, sh.claimWaitAt = true, s.scanSeq, p.starts
		s.blocked(sh, j, r)
		return false
	default:
		allocs, nodes, ok, masked := s.placeBF(p, j, mustBorrow)
		if ok {
			s.startPlaced(sh, j, mustBorrow, allocs, nodes)
			return true
		}
		r = s.shortOf(p, j)
		if masked {
			if _, _, free := s.place(p, j); free {
				r = ReasonBackfillWouldDelay
			}
		}
	}
	if r != ReasonBorrowLimit && s.tryFairPreempt(p, sh, j) {
		return false
	}
	if s.tryPreempt(p, sh, j) {
		return false
	}
	s.blocked(sh, j, r)
	if sh.cfg.Strategy == LendAndBorrow {
		sh.reservedB += b
		if r != ReasonBorrowLimit {
			// With backfill the first blocked borrower reserves nodes and
			// GPUs instead of claiming a count of the lendable ones: later
			// borrowers fit around it.
			if s.cfg.Backfill && p.bresv != nil && p.bresv.j == j {
				// Its reservation stands (fair share: made again at the
				// start of phase 2, keepSticky).
				sh.resvB = b
				if r == ReasonQuota {
					s.topoClaim(p, sh, j, g)
				}
				return false
			}
			if s.cfg.Backfill && (p.bresv == nil || !s.cfg.FairShare && seqBefore(j, p.bresv.j)) {
				if old := p.bresv; old != nil {
					s.unreserve(old.j)
				}
				own := sh.resv != nil && sh.resv.j == j
				if res := s.reserveFor(p, j, resvBorrower); res != nil {
					p.bresv = res
					sh.resvB = b
					if s.cfg.FairShare {
						p.bsticky = j
					}
					if own {
						sh.resv = res // it keeps the share's headroom
					}
					if r == ReasonQuota {
						s.topoClaim(p, sh, j, g)
					}
					return false
				}
			}
			if s.reserveExtra(p, sh, j, b) {
				return false
			}
			// EASY: while a borrower reservation stands, later
			// borrowers fit around it; a claim would keep idle GPUs
			// that a short borrower could use before it starts.
			if !s.cfg.Backfill || p.bresv == nil {
				sh.reservedP += g
				if s.claimMet(p, g) {
					p.claimed += g
				}
			}
		} else {
			sh.reservedP += g
		}
	}
	return false
}

// shareHeap orders shares by the key of their current candidate (cached in
// the heap: only the top share's candidate changes, and fixTop reads its
// key again).
type shareHeap struct {
	h   minHeap[keyedShare]
	key func(*share) heapKey
}

type keyedShare struct {
	sh  *share
	key heapKey
}

// heapKey orders shares in a pass: by fair key (phase 2 under fair share),
// then by their candidate's Seq.
type heapKey struct {
	fair float64
	seq  uint64
}

func newShareHeap(key func(*share) heapKey) shareHeap {
	return shareHeap{key: key}
}

// less orders by key, then by share (config order).
func (a keyedShare) less(b keyedShare) bool {
	switch {
	case a.key.fair != b.key.fair:
		return a.key.fair < b.key.fair
	case a.key.seq != b.key.seq:
		return a.key.seq < b.key.seq
	}
	return a.sh.idx < b.sh.idx
}

// add adds sh with its key; init orders what was added.
func (h *shareHeap) add(sh *share) { h.h.add(keyedShare{sh: sh, key: h.key(sh)}) }
func (h *shareHeap) init()         { h.h.init() }
func (h *shareHeap) len() int      { return h.h.len() }
func (h *shareHeap) top() *share   { return h.h.top().sh }
func (h *shareHeap) pop()          { h.h.pop() }

// fixTop reads the top share's key again.
func (h *shareHeap) fixTop() {
	h.h.items[0].key = h.key(h.h.items[0].sh)
	h.h.fix(0)
}
