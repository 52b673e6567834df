package sched

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The needless-victim oracle (issue 30 item 3): a victim whose GPUs its
// preemptor did not need. When a victim starts again on exactly the GPUs
// it held when it was preempted, its preemptor having started (in the
// same pass or before) on none of them (nor on the victim's node, when it
// is place=excl) and still running, and nothing that could free GPUs
// happened since the preemption but its victims' exits (noteChange; no
// restart, no reload), the preemption took a job for nothing: lost work, a
// used retry, a wasted grace.
//
// Not checked (known, left as designed): a preemptor that reclaims from
// other shares must end within its quota (preempt.go, finalOK), so with
// in-share preemption it also takes lower-priority jobs of its own share
// for the quota alone; when its share may borrow, such a job starts again
// at once as a borrower, often on the GPUs it left. Letting the share end
// over its quota instead would let an owner reclaim from another share's
// borrowers in order to borrow itself.

// victimRec is a job preempted in some pass, as the world saw it then.
type victimRec struct {
	forJob  JobID
	allocs  []Alloc
	changes int // the world's change count when it was preempted
	others  int // exits of other preemptors' victims by then
	// quotaOnly: an in-share victim of a preemptor that also reclaims
	// from other shares (searchInShareReclaim), which must then end
	// within its quota: such a victim may be taken for the quota alone
	// and start again as a borrower (see below).
	quotaOnly bool
}

// noteVictims records the victims of a plan with what they hold.
func (w *world) noteVictims(p Plan) {
	if w.victims == nil {
		w.victims = map[JobID]victimRec{}
	}
	cross := map[JobID]bool{}
	for _, pr := range p.Preempts {
		if pr.Kind == CrossShare {
			cross[pr.For] = true
		}
	}
	for _, pr := range p.Preempts {
		v, ok := w.s.jobs[pr.Victim]
		if !ok {
			continue
		}
		w.victims[pr.Victim] = victimRec{forJob: pr.For, allocs: cloneAllocs(v.allocs), changes: w.changes,
			others: w.victimExits[""] - w.victimExits[pr.For], quotaOnly: pr.Kind == InShare && cross[pr.For]}
	}
}

// noteChange counts an accepted event that may free GPUs or change what
// a job may use: not a victim's exit (its preemption expected it), nor an
// event that only adds demand or reorders the queue (a submission, a hold,
// a priority, an outcome of a job the core no longer has, a swap or move of
// pending jobs).
func (w *world) noteChange(ev Event) {
	switch e := ev.(type) {
	case Exited:
		if rec, victim := w.victims[e.ID]; victim {
			// Its own preemptor's victims leaving is the preemption's
			// course; another preemptor's may free GPUs or quota for it.
			if w.victimExits == nil {
				w.victimExits = map[JobID]int{}
			}
			w.victimExits[""]++
			w.victimExits[rec.forJob]++
			return
		}
	case Submitted, PriorityChanged, HoldChanged, DependencyOutcome, Swapped, Moved:
		return
	}
	w.changes++
}

// checkNeedlessVictims fails the world when a plan restarts a victim as
// the package comment above says it never should: on the GPUs it held,
// once its preemptor started (in this pass or before) on none of them.
func (w *world) checkNeedlessVictims(p Plan) {
	if w.preStarts == nil {
		w.preStarts = map[JobID][]Alloc{}
	}
	for _, st := range p.Starts {
		for _, rec := range w.victims {
			if rec.forJob == st.Job {
				w.preStarts[st.Job] = st.Allocs
				break
			}
		}
	}
	for _, st := range p.Starts {
		rec, ok := w.victims[st.Job]
		if !ok {
			continue
		}
		delete(w.victims, st.Job)
		pre, started := w.preStarts[rec.forJob]
		w.cov.add("victim restart")
		others := w.victimExits[""] - w.victimExits[rec.forJob]
		if !started || rec.quotaOnly || rec.changes != w.changes || rec.others != others || !sameAllocs(st.Allocs, rec.allocs) || overlaps(pre, rec.allocs) {
			continue
		}
		if pj, ok := w.s.jobs[rec.forJob]; !ok || pj.state != Running || pj.Exclusive && sameNode(pre, rec.allocs) {
			continue // it left since (its GPUs are free), or holds the victim's whole node
		}
		w.t.Fatalf("victim %s restarts on the GPUs it held when preempted for %s (%v), which started on %v: nothing that frees GPUs happened in between, so it was not needed\n%s",
			st.Job, rec.forJob, rec.allocs, pre, w.dump())
	}
}

func cloneAllocs(a []Alloc) []Alloc {
	out := make([]Alloc, len(a))
	for i, x := range a {
		out[i] = Alloc{Node: x.Node, GPUs: slices.Clone(x.GPUs)}
	}
	return out
}

// sameAllocs says whether a and b hold the same GPUs of the same nodes.
func sameAllocs(a, b []Alloc) bool {
	key := func(l []Alloc) map[string][]int {
		m := map[string][]int{}
		for _, x := range l {
			g := slices.Clone(x.GPUs)
			slices.Sort(g)
			m[x.Node] = append(m[x.Node], g...)
		}
		return m
	}
	ka, kb := key(a), key(b)
	if len(ka) != len(kb) {
		return false
	}
	for n, g := range ka {
		if h, ok := kb[n]; !ok || !slices.Equal(g, h) {
			return false // a job with no GPU holds its node all the same
		}
	}
	return true
}

// sameNode says whether a and b use a common node.
func sameNode(a, b []Alloc) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Node == y.Node {
				return true
			}
		}
	}
	return false
}

// overlaps says whether a and b share a GPU of a node.
func overlaps(a, b []Alloc) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Node != y.Node {
				continue
			}
			for _, g := range x.GPUs {
				if slices.Contains(y.GPUs, g) {
					return true
				}
			}
		}
	}
	return false
}

func TestSameAllocs(t *testing.T) {
	tests := []struct {
		a, b       []Alloc
		same, over bool
	}{
		{[]Alloc{{Node: "n1", GPUs: []int{1, 0}}}, []Alloc{{Node: "n1", GPUs: []int{0, 1}}}, true, true},
		{[]Alloc{{Node: "n1", GPUs: []int{0}}}, []Alloc{{Node: "n2", GPUs: []int{0}}}, false, false},
		{[]Alloc{{Node: "n1", GPUs: []int{0, 1}}}, []Alloc{{Node: "n1", GPUs: []int{1, 2}}}, false, true},
		{[]Alloc{{Node: "n1", GPUs: []int{0}}, {Node: "n2", GPUs: []int{3}}}, []Alloc{{Node: "n2", GPUs: []int{3}}, {Node: "n1", GPUs: []int{0}}}, true, true},
		// Jobs without GPUs: the node is what they hold.
		{[]Alloc{{Node: "n0", GPUs: []int{}}}, []Alloc{{Node: "n1"}}, false, false},
		{[]Alloc{{Node: "n0"}}, []Alloc{{Node: "n0", GPUs: []int{}}}, true, false},
	}
	for i, tt := range tests {
		if got := sameAllocs(tt.a, tt.b); got != tt.same {
			t.Errorf("%d: sameAllocs = %v, want %v", i, got, tt.same)
		}
		if got := overlaps(tt.a, tt.b); got != tt.over {
			t.Errorf("%d: overlaps = %v, want %v", i, got, tt.over)
		}
	}
}

// TestPropNeedlessVictims: worlds made for preemptions (in-share
// preemption on most shares, victims exiting together as a shared grace
// makes them, then a pass) under every invariant and the needless-victim
// oracle.
func TestPropNeedlessVictims(t *testing.T) {
	propCheck(t, []string{"plan preempt", "victim restart"}, func(rt *rapid.T, cov *coverage) {
		w := runVictimWorld(rt, cov, rapid.Bool().Draw(rt, "walls"))
		w.replay()
	})
}

// runVictimWorld is runWorldBF with in-share preemption on most shares and
// an event mix of submissions, passes and victims' exits.
func runVictimWorld(t *rapid.T, cov *coverage, walls bool) *world {
	cfg, _ := genConfig(t, false, false)
	for i := range cfg.Shares {
		cfg.Shares[i].InSharePreemption = rapid.IntRange(0, 3).Draw(t, "inshare") > 0
	}
	if walls {
		cfg.Backfill = true
		cfg.Partitions[0].DefaultWalltime = time.Duration(rapid.SampledFrom([]int{0, 5, 20}).Draw(t, "defaultWall")) * time.Second
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, s: s, cfg: cfg, cfg0: cfg, walls: walls, now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		o: newOracle(), cov: cov, refusedAt: map[int]bool{}, forgot: map[JobID]bool{}, shrunkCap: map[string]bool{}}
	w.countConfig(cfg)
	for _, n := range cfg.Nodes {
		w.apply(NodeUp{Node: n.Name})
	}
	steps := rapid.SampledFrom([]int{20, 60, 120}).Draw(t, "steps")
	for range steps {
		switch rapid.SampledFrom([]string{"submit", "submit", "submit", "schedule", "schedule", "exit", "exitvictims", "exitvictims", "prio"}).Draw(t, "vkind") {
		case "submit":
			w.submit()
		case "schedule":
			w.schedule()
		case "exit":
			if r := w.jobsIn(Running); len(r) > 0 {
				w.apply(Exited{ID: rapid.SampledFrom(r).Draw(t, "done")})
			}
		case "exitvictims":
			// Every victim exits at once (one grace for all), then a pass.
			for _, id := range w.jobsIn(Preempting) {
				w.apply(Exited{ID: id, ExitStatus: 271})
			}
			w.schedule()
		case "prio":
			if len(w.ids) > 0 {
				w.apply(PriorityChanged{ID: rapid.SampledFrom(w.ids).Draw(t, "pj"), Priority: rapid.IntRange(0, 3).Draw(t, "np")})
			}
		}
	}
	w.schedule()
	return w
}
