package sched

// What each share borrows and each user holds at the end of a Schedule
// call is what accrue integrates until the next call (fairshare.go).
// Recording it by walking every share and user at every call cost a pass
// at 200 shares more than the pass itself when it had little to do; so
// the record is kept between calls and made again only for the shares
// whose holdings changed since (shareAdd, userAdd, a ghost share), or for
// all after a reload or a usage restore. The property tests check after
// every event and pass that every share not marked has the record a
// walk gives (checkRates).

// rateState is which shares' records are stale.
type rateState struct {
	all   bool     // every share's (and the records of names without a share)
	dirty []*share // the shares with rateMarked set
}

// markRates marks sh's record stale: its holdings changed.
func (s *Scheduler) markRates(sh *share) {
	if sh == nil {
		return
	}
	sh.holdVer++ // and its sorted ends (shareends.go)
	if !sh.rateMarked {
		sh.rateMarked = true
		s.rates.dirty = append(s.rates.dirty, sh)
	}
}

// snapshotRates records what every share borrows and every user holds now:
// the holdings accrue integrates until the next call.
func (s *Scheduler) snapshotRates() {
	for _, sh := range s.rates.dirty {
		sh.rateMarked = false
	}
	dirty := s.rates.dirty
	s.rates.dirty = s.rates.dirty[:0]
	if s.rates.all {
		s.rates.all = false
		s.snapshotAllRates()
		return
	}
	for _, sh := range dirty {
		s.snapshotShareRates(sh)
	}
}

// snapshotAllRates records every share's holdings afresh.
func (s *Scheduler) snapshotAllRates() {
	for _, u := range s.uses {
		u.rate = 0
		clear(u.urate)
	}
	for _, sh := range s.shares {
		s.snapshotShareRates(sh)
	}
}

// snapshotShareRates records one share's holdings: what it borrows, and
// what each of its users holds.
func (s *Scheduler) snapshotShareRates(sh *share) {
	b := max(0, sh.inUse()-sh.quota())
	if b == 0 && len(sh.users) == 0 && s.uses[sh.cfg.Name] == nil {
		return
	}
	u := s.useOf(sh.cfg.Name)
	u.rate = b
	clear(u.urate)
	for name, us := range sh.users {
		if us.gpus > 0 {
			u.urate[name] = us.gpus
		}
	}
}

// useFor is s.uses[sh.cfg.Name], kept with the share while no entry of
// s.uses is made or dropped (usesGen): the fair keys read it for every
// share a pass orders.
func (s *Scheduler) useFor(sh *share) *shareUse {
	if sh.useGen != s.usesGen+1 {
		sh.useP, sh.useGen = s.uses[sh.cfg.Name], s.usesGen+1
	}
	return sh.useP
}

// shareFairUsage is ShareFairUsage of sh.
func (s *Scheduler) shareFairUsage(sh *share) float64 {
	if u := s.useFor(sh); u != nil {
		return u.borrowed
	}
	return 0
}
