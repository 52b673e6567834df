package sched

import (
	"time"
)

// Head reservations (backfill): a share's first job that does not fit its
// quota headroom (eff + request > quota: it must borrow, or, in a RESERVE
// or LEND share or at its borrow limit, wait for the share's own jobs to
// end) is set aside by phase 1 for phase 2. Without protection the share's
// later jobs that fit the headroom start before it in phase 1, pass after
// pass, and take the GPUs it waits for: a large job starves behind its own
// share's small ones. So phase 1 reserves for it there and then: nodes and
// GPUs as any reservation, from the time its share's count allows it on
// (the share's running jobs' expected ends, when its quota or borrow limit
// is what stops it), and the share's quota headroom it will use. This
// reservation (own) binds only the later jobs of its share, in queue
// order; other shares' jobs are not bound by it (a reservation they run
// into is dropped and made again next pass), so owners and other shares'
// within-quota jobs come first as before. When phase 2 gives the job the
// partition's borrower reservation, that one replaces it and binds the
// share's later jobs the same way.

// reserveHead makes the own reservation of j, the first job of sh phase 1
// sets aside for not fitting its quota headroom.
func (s *Scheduler) reserveHead(p *partition, sh *share, j *job) {
	if !s.cfg.Backfill || sh.resv != nil || sh.holdAll || len(sh.cands) > 0 || p.usable == 0 || j.charge() == 0 {
		return
	}
	if s.atArrayLimit(j) || userLimit(sh, j) != ReasonNone {
		return
	}
	g := j.charge()
	limit := sh.quota()
	if sh.cfg.Strategy == LendAndBorrow {
		if bc := sh.borrowCap(); bc >= 0 {
			limit += bc
		} else {
			limit = -1
		}
	}
	nb := s.now
	if limit >= 0 {
		if g > limit {
			return // never fits its share's count
		}
		var ok bool
		if nb, ok = s.shareFreesAt(sh, sh.usage()+sh.reservedQ+g-limit); !ok {
			return
		}
	}
	res := s.reserveFrom(p, j, resvHead, nb)
	if res == nil {
		return
	}
	q := max(0, min(g, sh.quota()-sh.usage()-sh.reservedQ))
	sh.resv, sh.resvQ = res, q
	sh.reservedQ += q
}

// shareFreesAt is when the share's holders are expected to have given back
// need GPUs; false when never (a job without walltime, or nominations).
func (s *Scheduler) shareFreesAt(sh *share, need int) (time.Time, bool) {
	if need <= 0 {
		return s.now, true
	}
	for _, e := range s.sortedEnds(sh) { // kept between passes (shareends.go)
		if !e.end.Before(forever) {
			break
		}
		need -= e.gpus
		if need <= 0 {
			return s.clampNow(e.end), true
		}
	}
	return forever, false
}

// shareEnd is one holder's GPUs and its expected end.
type shareEnd struct {
	end  time.Time
	gpus int
}

// Sticky borrower reservations (fair share). Under fair share the
// partition's borrower reservation goes to the first blocked borrower in
// fair order; since that order moves with usage and waiting, a large
// borrower of a heavy share would get it for one pass and lose it the next
// to whoever's turn it is then, and never start. So once made it stays
// with its job (p.bsticky) until the job starts, leaves, stops being a
// borrower or can no longer borrow (strategy, borrow limit): every pass
// computes it again for that job at the start of phase 2, before the other
// borrowers are tried, so they fit around it. Fair order decides only who
// gets the next one. Reclaim is not bound: owners take lent GPUs back as
// before (phase 1 comes first, and a reservation a preemptor runs into is
// made again next pass, for the same job).

// keepSticky makes the partition's borrower reservation again for its
// sticky job, or forgets the job when it no longer needs one.
func (s *Scheduler) keepSticky(p *partition) {
	j := p.bsticky
	if j == nil || p.bresv != nil && p.bresv.j == j {
		return
	}
	if !s.stickyOK(p, j) {
		p.bsticky = nil
		return
	}
	if old := p.bresv; old != nil {
		s.unreserve(old.j)
	}
	sh := j.share
	own := sh.resv != nil && sh.resv.j == j
	res := s.reserveFor(p, j, resvBorrower)
	if res == nil {
		p.bsticky = nil
		return
	}
	p.bresv = res
	if own {
		sh.resv = res
	}
}

// stickyOK says whether j still is a pending borrower of p that may
// borrow.
func (s *Scheduler) stickyOK(p *partition, j *job) bool {
	sh := j.share
	if j.gone || j.state != Pending || !j.inReady || j.nom != nil || sh == nil || sh.removed || sh.part != p {
		return false
	}
	if sh.cfg.Strategy != LendAndBorrow || p.usable == 0 {
		return false
	}
	b := sh.usage() + j.charge() - sh.quota()
	if b <= 0 {
		return false // within quota: phase 1 looks after it
	}
	if bc := sh.borrowCap(); bc >= 0 && b > bc {
		return false
	}
	return !s.atArrayLimit(j) && userLimit(sh, j) == ReasonNone
}
