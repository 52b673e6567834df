package sched

// Extra borrower reservations (backfill). The partition's borrower
// reservation (p.bresv) goes to one blocked borrower at a time; a large
// borrower behind it (of its share, or of another) got none until that one
// started, and small borrowers took every GPU freed in the meantime: a
// burst of large borrowers drained their nodes one after the other. So up
// to maxExtraResv more blocked borrowers, in the borrowers' order, reserve
// too, each around the reservations made before it (conservative backfill
// to that depth, for borrowers only). An extra reservation binds the later
// jobs of its share (queue order) and the borrowers that have no
// reservation or a younger one (rank), not the job of p.bresv. Like
// p.bresv it does not bind other shares' within-quota jobs: owners come
// first (one that runs into it drops it, and it is made again next pass),
// though a job that a reservation does not bind keeps off its GPUs when it
// can start elsewhere now (placeBF).
//
// The cost is maxExtraResv more reservations per pass at most, each a look
// at the partition's nodes.

// maxExtraResv is how many borrower reservations a partition holds besides
// p.bresv.
const maxExtraResv = 4

// reserveExtra gives j, a blocked borrower of sh that needs b GPUs beyond
// its quota, an extra borrower reservation when the partition has room for
// one; false when it has none.
func (s *Scheduler) reserveExtra(p *partition, sh *share, j *job, b int) bool {
	if !s.cfg.Backfill || p.bresv == nil || p.bresv.j == j {
		return false
	}
	if j.resv != nil && j.resv.kind == resvExtra {
		if sh.xresv == j.resv {
			sh.resvB = b
		}
		return true // it stands
	}
	n := 0
	for _, r := range p.resvs {
		if r.kind == resvExtra {
			n++
		}
	}
	if n >= maxExtraResv {
		return false
	}
	own := sh.resv != nil && sh.resv.j == j
	res := s.reserveFor(p, j, resvExtra)
	if res == nil {
		return false
	}
	if own {
		sh.resv = res // it keeps the share's headroom
	}
	if sh.xresv == nil && p.bresv.j.share != sh {
		sh.xresv, sh.resvB = res, b
	}
	return true
}

// mayBorrow says whether j of sh, b GPUs beyond its quota, may borrow at
// all: its share lends and borrows, within its borrow limit.
func mayBorrow(sh *share, b int) bool {
	if sh.cfg.Strategy != LendAndBorrow {
		return false
	}
	bc := sh.borrowCap()
	return bc < 0 || b <= bc
}
