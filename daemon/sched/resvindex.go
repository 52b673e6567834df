package sched

import "time"

// The reservation index (issue 30 item 9). A reservation takes, for a job
// of k nodes x g GPUs, the k nodes that hold g GPUs earliest (node order on
// a tie; reserveFrom). Computed by walking every node of the partition, a
// pass that makes a reservation per share costs shares x nodes: at 2,000
// nodes and 200 shares that walk was most of a pass and of a sharq-sim run.
// So each partition keeps, per GPU count g asked for, a tournament tree
// over its nodes (by position) of the time each node is expected to hold g
// GPUs (nodeTime's: its release profile with the reservations on it busy
// until their jobs end), and a reservation reads its k nodes off the tree
// in k x log(nodes) steps.
//
// The tree is kept between passes and brought up to date by the changes
// that move a node's times: a node refreshed (nodeRefresh: anything it
// holds, its state), a release profile made again (profile: nominations,
// whose times follow now), a reservation made or dropped on the node, and
// an event that changes profiles without touching the nodes (profEpoch:
// every node again). Changed nodes are only marked; the tree reads them
// again when a reservation next needs it, exactly as the walk would have
// then. A job the tree does not describe (place=excl, labels, no GPUs, a
// partition that accounts CPUs or memory) is reserved by the walk. The
// property tests check after every event and pass that every node the
// tree holds as current has the times a fresh computation gives
// (checkResvIndex).

// resvIndex is one partition's reservation index.
type resvIndex struct {
	size    int    // leaves: a power of two, at least the partition's nodes
	epoch   uint64 // Scheduler.profEpoch when every node was last read
	all     bool   // every node must be read again
	isDirty []bool // by pidx
	dirty   []int  // pidx of the nodes to read again
	trees   []*timeTree
	buf     []time.Time
	reading bool // reading nodes: the profiles made meanwhile are read at once
}

// timeTree is the tournament tree of one GPU count: leaf i is node pidx i's
// time (inf when it never holds that many GPUs, or is not usable); every
// inner entry is the least leaf below it by (time, pidx).
type timeTree struct {
	t   []time.Time // by leaf
	inf []bool      // by leaf
	win []int32     // 2*size: win[size+i] = i; win[k] = the lesser of win[2k], win[2k+1]
}

// resvIndexTouch marks n to be read again by its partition's index.
func (s *Scheduler) resvIndexTouch(n *node) {
	p := n.part
	if p == nil || p.ri == nil || n.pidx >= len(p.ri.isDirty) || p.nodes[n.pidx] != n {
		return
	}
	ri := p.ri
	if ri.reading {
		return // the node being read: its times are read from its new profile
	}
	if !ri.isDirty[n.pidx] {
		ri.isDirty[n.pidx] = true
		ri.dirty = append(ri.dirty, n.pidx)
	}
}

// indexedCands is reserveFrom's choice of nodes, from the index: the
// j.Nodes nodes with the earliest times no earlier than nb, in (time, node
// order), each with its time. ok is false when the index does not describe
// j; then the caller walks the nodes.
func (s *Scheduler) indexedCands(p *partition, j *job, nb time.Time) ([]resvCand, bool) {
	g, k := j.GPUsPerNode, j.Nodes
	if j.Exclusive || g <= 0 || k <= 0 || len(j.Labels) > 0 || p.accounts || nb.Before(s.now) || g > maxNodeGPUs {
		return nil, false
	}
	ri := s.resvIndexOf(p)
	return ri.pick(s.treeOf(p, ri, g), p.nodes, k, nb), true
}

// pick is the k nodes of tr with the earliest times, each taken as nb when
// earlier, by (time, node order); fewer when fewer have a time.
func (ri *resvIndex) pick(tr *timeTree, nodes []*node, k int, nb time.Time) []resvCand {
	best := make([]resvCand, 0, k)
	// The nodes free by nb all count as nb: the first k of them in node
	// order, when there are k.
	for from := 0; len(best) < k; {
		i := ri.firstBy(tr, 1, 0, ri.size, from, nb)
		if i < 0 {
			break
		}
		best = append(best, resvCand{nodes[i], nb})
		from = i + 1
	}
	if len(best) == k {
		return best
	}
	// Otherwise the k earliest by (time, node order): they include every
	// node free by nb.
	best = best[:0]
	for len(best) < k {
		i := tr.win[1]
		if tr.inf[i] {
			break
		}
		t := tr.t[i]
		if t.Before(nb) {
			t = nb
		}
		best = append(best, resvCand{nodes[i], t})
		tr.inf[i] = true // taken: off the tree until the end
		ri.fix(tr, int(i))
	}
	for _, c := range best {
		tr.inf[c.n.pidx] = false
		ri.fix(tr, c.n.pidx)
	}
	// Those taken as nb go first, in node order, as the walk has them.
	for i := 1; i < len(best); i++ {
		for m := i; m > 0 && best[m].t.Equal(best[m-1].t) && best[m].n.pidx < best[m-1].n.pidx; m-- {
			best[m], best[m-1] = best[m-1], best[m]
		}
	}
	return best
}

// resvIndexOf returns p's index brought up to date.
func (s *Scheduler) resvIndexOf(p *partition) *resvIndex {
	ri := p.ri
	if ri == nil || len(ri.isDirty) != len(p.nodes) {
		size := 1
		for size < len(p.nodes) {
			size *= 2
		}
		ri = &resvIndex{size: size, isDirty: make([]bool, len(p.nodes)), all: true}
		p.ri = ri
	}
	if ri.epoch != s.profEpoch {
		ri.epoch, ri.all = s.profEpoch, true
	}
	// A nominated node's profile follows now: profile makes it again
	// (and touches the node) when it is stale.
	for _, nm := range p.noms {
		for _, n := range nm.nodes {
			if n.usable() {
				s.profile(n)
			}
		}
	}
	ri.reading = true
	defer func() { ri.reading = false }()
	if ri.all {
		for i := range ri.isDirty {
			ri.isDirty[i] = false
		}
		ri.dirty = ri.dirty[:0]
		ri.all = false
		for _, tr := range ri.trees {
			if tr != nil {
				s.fillTree(p, ri, tr, ri.treeG(tr))
			}
		}
		return ri
	}
	for _, i := range ri.dirty {
		ri.isDirty[i] = false
		ts := s.nodeTimes(p.nodes[i], ri)
		for g, tr := range ri.trees {
			if tr != nil {
				setLeaf(tr, i, ts, g+1)
				ri.fix(tr, i)
			}
		}
	}
	ri.dirty = ri.dirty[:0]
	return ri
}

// treeG is the GPU count tr is for.
func (ri *resvIndex) treeG(tr *timeTree) int {
	for g, x := range ri.trees {
		if x == tr {
			return g + 1
		}
	}
	return 0
}

// treeOf returns the tree of GPU count g, built when new (ri is up to
// date).
func (s *Scheduler) treeOf(p *partition, ri *resvIndex, g int) *timeTree {
	for len(ri.trees) < g {
		ri.trees = append(ri.trees, nil)
	}
	tr := ri.trees[g-1]
	if tr == nil {
		tr = &timeTree{t: make([]time.Time, ri.size), inf: make([]bool, ri.size), win: make([]int32, 2*ri.size)}
		ri.trees[g-1] = tr
		ri.reading = true
		s.fillTree(p, ri, tr, g)
		ri.reading = false
	}
	return tr
}

// nodeTimes is n's expected free times, ascending, with the reservations
// on it busy until their jobs end (nodeTime's rel); nil when n is not
// usable.
func (s *Scheduler) nodeTimes(n *node, ri *resvIndex) []time.Time {
	if !n.usable() {
		return nil
	}
	pr := s.profile(n)
	if len(n.resvs) == 0 {
		return pr.sorted
	}
	rel := append(ri.buf[:0], pr.rel...)
	for _, r := range n.resvs {
		for k, y := range r.nodes {
			if y == n {
				later(rel, r.gpus[k], r.end)
			}
		}
	}
	sortTimes(rel)
	ri.buf = rel
	return rel
}

// setLeaf sets leaf i of tr from the node's sorted times for g GPUs.
func setLeaf(tr *timeTree, i int, ts []time.Time, g int) {
	if g <= len(ts) && ts[g-1].Before(forever) {
		tr.t[i], tr.inf[i] = ts[g-1], false
	} else {
		tr.t[i], tr.inf[i] = forever, true
	}
}

// fillTree reads every node into tr.
func (s *Scheduler) fillTree(p *partition, ri *resvIndex, tr *timeTree, g int) {
	for i := range tr.inf {
		tr.t[i], tr.inf[i] = forever, true
	}
	for i, n := range p.nodes {
		setLeaf(tr, i, s.nodeTimes(n, ri), g)
	}
	for i := 0; i < ri.size; i++ {
		tr.win[ri.size+i] = int32(i)
	}
	for k := ri.size - 1; k >= 1; k-- {
		tr.win[k] = tr.lesser(tr.win[2*k], tr.win[2*k+1])
	}
}

// lesser is the leaf that comes first by (time, pidx); a leaf off the
// tree (inf) comes after every other.
func (tr *timeTree) lesser(a, b int32) int32 {
	switch {
	case tr.inf[a] != tr.inf[b]:
		if tr.inf[a] {
			return b
		}
		return a
	case !tr.inf[a] && tr.t[b].Before(tr.t[a]):
		return b
	case !tr.inf[a] && tr.t[a].Before(tr.t[b]):
		return a
	case b < a:
		return b
	}
	return a
}

// fix recomputes the entries above leaf i.
func (ri *resvIndex) fix(tr *timeTree, i int) {
	for k := (ri.size + i) / 2; k >= 1; k /= 2 {
		tr.win[k] = tr.lesser(tr.win[2*k], tr.win[2*k+1])
	}
}

// firstBy is the first leaf at or after from, in the subtree k covering
// [lo, hi), whose time is not after t; -1 when none.
func (ri *resvIndex) firstBy(tr *timeTree, k, lo, hi, from int, t time.Time) int {
	if hi <= from {
		return -1
	}
	w := tr.win[k]
	if tr.inf[w] || tr.t[w].After(t) {
		return -1 // the least below is too late
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) / 2
	if i := ri.firstBy(tr, 2*k, lo, mid, from, t); i >= 0 {
		return i
	}
	return ri.firstBy(tr, 2*k+1, mid, hi, from, t)
}
