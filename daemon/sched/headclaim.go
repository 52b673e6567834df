package sched

// Headroom claims (issue 30 item 4). Phase 1 sets aside a share's job that
// does not fit its quota headroom (it must borrow, or wait for the share's
// own jobs to end) for the borrowers' phase. With backfill and walltimes
// its head reservation (headresv.go) keeps the share's later jobs from
// taking the quota headroom it waits for; without walltimes (or without
// backfill) it has none, and every GPU of the share's quota that freed
// went to a later, lower-priority job that fits within the quota: a
// high-priority 8-GPU job waited behind 34 later low-priority 4-GPU jobs.
//
// So when the first set-aside job of a share gets no head reservation, it
// claims the share's quota headroom for the rest of the pass (up to its
// size, counted in share.reservedQ like a reservation's), against the
// share's jobs of lower priority only: jobs of its priority keep their
// submission order as before, and other shares are not bound (the GPUs
// stay lendable, and owners reclaim as ever). The claim ends when the job
// starts. Like a within-quota job blocked for room, which holds every
// later job of its share, it has no time bound: it orders the share's own
// queue, and keeps no GPU from another share.

// claimHeadroom makes j, the job of sh phase 1 sets aside for not fitting
// its quota headroom, claim that headroom when it is the share's first
// and got no head reservation.
func (s *Scheduler) claimHeadroom(sh *share, j *job) {
	if len(sh.cands) > 0 || sh.claimJ != nil || sh.holdAll || (sh.resv != nil && sh.resv.j == j) {
		return
	}
	if sh.resv != nil || j.charge() == 0 || s.atArrayLimit(j) || userLimit(sh, j) != ReasonNone {
		return // a reservation ahead binds the share already, or it cannot start anyway
	}
	q := min(j.charge(), sh.quota()-sh.usage()-sh.reservedQ)
	if q <= 0 {
		return
	}
	sh.claimJ, sh.claimQ = j, q
	sh.reservedQ += q
}

// dropHeadroomClaim ends j's headroom claim when j starts.
func (s *Scheduler) dropHeadroomClaim(sh *share, j *job) {
	if sh.claimJ == j {
		sh.reservedQ -= sh.claimQ
		sh.claimJ, sh.claimQ = nil, 0
	}
}

// claimNotBinding is the part of sh's reserved quota headroom that is the
// headroom claim not binding j: j's own, or one of a job of no higher
// priority than j.
func claimNotBinding(sh *share, j *job) int {
	if c := sh.claimJ; c != nil && (c == j || j.Priority >= c.Priority) {
		return sh.claimQ
	}
	return 0
}
