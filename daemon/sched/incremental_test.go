package sched

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// checkIncremental compares what the core keeps between passes and
// updates by events (the incremental state, issue 30 item 9) with a
// computation from scratch; the property tests call it after every event
// and every pass. It changes nothing the core keeps.
func (s *Scheduler) checkIncremental() error {
	if err := s.checkRates(); err != nil {
		return err
	}
	if err := s.checkShareEnds(); err != nil {
		return err
	}
	if err := s.checkShapes(); err != nil {
		return err
	}
	for _, sh := range s.shares {
		if sh.useGen == s.usesGen+1 && sh.useP != s.uses[sh.cfg.Name] {
			return fmt.Errorf("share %s: kept usage entry %p, the map's %p", sh.cfg.Name, sh.useP, s.uses[sh.cfg.Name])
		}
	}
	return s.checkResvIndex()
}

// checkShareEnds checks every share's kept sorted ends that the next
// reader would use (shareends.go) against its running jobs now.
func (s *Scheduler) checkShareEnds() error {
	for _, sh := range s.shares {
		c := sh.ends
		if !c.valid || c.ver != sh.holdVer || c.epoch != s.profEpoch {
			continue // made again when read
		}
		var fresh []shareEnd
		for _, x := range sh.running {
			fresh = append(fresh, shareEnd{s.rawEnd(x), x.gpuN})
		}
		kept := slices.Clone(c.ends)
		for _, l := range [][]shareEnd{fresh, kept} {
			slices.SortFunc(l, func(a, b shareEnd) int {
				if c := a.end.Compare(b.end); c != 0 {
					return c
				}
				return a.gpus - b.gpus
			})
		}
		if !slices.IsSortedFunc(c.ends, func(a, b shareEnd) int { return a.end.Compare(b.end) }) || !slices.Equal(kept, fresh) {
			return fmt.Errorf("share %s: kept ends %v, running jobs' %v", sh.cfg.Name, c.ends, fresh)
		}
	}
	return nil
}

// checkRates checks the recorded holdings of every share not marked
// stale (rates.go) against a walk of its holdings.
func (s *Scheduler) checkRates() error {
	if s.rates.all {
		return nil
	}
	for _, sh := range s.shares {
		if sh.rateMarked {
			continue
		}
		b := max(0, sh.inUse()-sh.quota())
		want := map[string]int{}
		for name, us := range sh.users {
			if us.gpus > 0 {
				want[name] = us.gpus
			}
		}
		u := s.uses[sh.cfg.Name]
		if u == nil {
			if b != 0 || len(sh.users) != 0 {
				return fmt.Errorf("share %s: no usage record, holds %d borrowed, users %v", sh.cfg.Name, b, want)
			}
			continue
		}
		if u.rate != b || !maps.Equal(u.urate, want) {
			return fmt.Errorf("share %s: recorded %d borrowed, users %v; holds %d, users %v", sh.cfg.Name, u.rate, u.urate, b, want)
		}
	}
	return nil
}

// checkResvIndex checks every partition's reservation index: each node
// the index holds as current (not marked, no epoch change, no nomination
// on it) has, for every GPU count the index keeps, the time a fresh
// release profile and the reservations on the node give; and every inner
// entry of each tree is the least leaf below it.
func (s *Scheduler) checkResvIndex() error {
	for _, p := range s.parts {
		ri := p.ri
		if ri == nil || len(ri.isDirty) != len(p.nodes) || ri.all || ri.epoch != s.profEpoch {
			continue // read again in full before it is used
		}
		nominated := map[*node]bool{}
		for _, nm := range p.noms {
			for _, n := range nm.nodes {
				nominated[n] = true
			}
		}
		for i, n := range p.nodes {
			if ri.isDirty[i] || nominated[n] || !n.nominated.isEmpty() {
				continue
			}
			fresh := s.freshNodeTimes(n)
			for g, tr := range ri.trees {
				if tr == nil {
					continue
				}
				want, wantInf := forever, true
				if g+1 <= len(fresh) && fresh[g].Before(forever) {
					want, wantInf = fresh[g], false
				}
				if tr.inf[i] != wantInf || !tr.t[i].Equal(want) {
					return fmt.Errorf("reservation index of %s: node %s, %d GPUs: kept %v (never: %v), fresh %v (never: %v)",
						p.cfg.Name, n.cfg.Name, g+1, tr.t[i], tr.inf[i], want, wantInf)
				}
			}
		}
		for g, tr := range ri.trees {
			if tr == nil {
				continue
			}
			for k := ri.size - 1; k >= 1; k-- {
				if w := tr.lesser(tr.win[2*k], tr.win[2*k+1]); tr.win[k] != w {
					return fmt.Errorf("reservation index of %s, %d GPUs: entry %d holds leaf %d, want %d", p.cfg.Name, g+1, k, tr.win[k], w)
				}
			}
		}
	}
	return nil
}

// freshNodeTimes is nodeTimes from a release profile made afresh, leaving
// the node's kept profile as it was.
func (s *Scheduler) freshNodeTimes(n *node) []time.Time {
	if !n.usable() {
		return nil
	}
	saved := n.prof
	saved.rel = append([]time.Time(nil), saved.rel...)
	saved.sorted = append([]time.Time(nil), saved.sorted...)
	saved.holds = append([]relHold(nil), saved.holds...)
	ri := n.part.ri
	n.part.ri = nil // making the profile touches the node: not in the index
	n.prof = relProfile{}
	pr := s.profile(n)
	rel := append([]time.Time(nil), pr.rel...)
	n.prof = saved
	n.part.ri = ri
	for _, r := range n.resvs {
		for k, y := range r.nodes {
			if y == n {
				later(rel, r.gpus[k], r.end)
			}
		}
	}
	sortTimes(rel)
	return rel
}

// checkShapes checks every job's kept shape that a pass would use
// (shapecache.go) against a fresh one.
func (s *Scheduler) checkShapes() error {
	for _, j := range s.sortedJobs() {
		if j.shapeAt != s.profEpoch+1 {
			continue
		}
		k := s.freshShape(j)
		k.h = shapeHash(k)
		if j.shapeK != k || j.chargeK != j.charge() {
			return fmt.Errorf("job %s: kept shape %+v charge %d, fresh %+v charge %d", j.ID, j.shapeK, j.chargeK, k, j.charge())
		}
	}
	return nil
}
