package sched

import (
	"slices"
	"time"
)

// A share's running jobs' expected ends, in order, are what a head
// reservation reads to find when the share's count lets its job on
// (shareFreesAt). Sorting them at every pass that looks at the share cost
// a pass over many busy shares more than the rest of the share's turn; so
// the sorted list is kept with the share and made again only when what it
// is made of may have changed: the share's holdings (shareAdd and
// userAdd bump holdVer through markRates) or a job's walltime, state or
// the configuration (Scheduler.profEpoch, as for the nodes' release
// profiles). The ends are kept before taking the later of them and now
// (rawEnd), which keeps their order whatever now is. The property tests
// check after every event and pass that a kept list equals a fresh one
// (checkShareEnds).

// endCache is a share's sorted expected ends.
type endCache struct {
	ver   uint64 // share.holdVer it was made at
	epoch uint64 // Scheduler.profEpoch it was made at
	valid bool
	ends  []shareEnd // by end, rawEnd's: long past for a job about to end
}

// sortedEnds returns sh's running jobs' rawEnd and GPUs, by end.
func (s *Scheduler) sortedEnds(sh *share) []shareEnd {
	c := &sh.ends
	if c.valid && c.ver == sh.holdVer && c.epoch == s.profEpoch {
		return c.ends
	}
	c.valid, c.ver, c.epoch = true, sh.holdVer, s.profEpoch
	c.ends = c.ends[:0]
	for _, x := range sh.running {
		c.ends = append(c.ends, shareEnd{s.rawEnd(x), x.gpuN})
	}
	slices.SortFunc(c.ends, func(a, b shareEnd) int { return a.end.Compare(b.end) })
	return c.ends
}

// clampNow is t, or now when t is earlier.
func (s *Scheduler) clampNow(t time.Time) time.Time {
	if t.Before(s.now) {
		return s.now
	}
	return t
}
