package sched

import (
	"fmt"
	"slices"
	"time"
)

// Topology-aware placement (issue 33).
//
// A Topology names nested levels, outermost first ("block" > "rack", or
// "spine" > "leaf"), and the domains of each level as sets of nodes; a
// partition names the topology its nodes sit in. A job asks for one level
// (TopologyRequest): required (PBS's place=group=LEVEL: all its nodes in
// one domain of that level), preferred (as few domains as possible,
// best-effort), or required for at most Wait from when its wait began and
// preferred after (Slurm's --switches=N@TIME). A partition's
// DefaultTopologyLevel is the preferred level of the jobs that name none.
//
// Placement. In a partition with a topology every job is placed domain by
// domain, best fit by domain as Slurm's block plugin does: of the domains
// of its level (the innermost level for a job that names none) that hold
// all of it, the one with the fewest free GPUs, and in it the nodes with
// the fewest free GPUs (node order on a tie). So small jobs fill domains
// already in use and whole domains stay free for large ones. When no
// domain holds it all, a required job waits (ReasonTopologyWaiting when
// free nodes elsewhere would hold it), a preferred job takes whole domains
// with the most fitting nodes first, and a job without a request is
// placed as in a partition without topology. Nothing here changes what a
// share may start: quotas, borrowing and reservations are checked as
// before, only the nodes differ.
//
// Reservations and preemption. A required job's reservation is for nodes
// of one domain: the domain whose k-th earliest node is earliest. Its
// victim search (reclaim, in-share and fair preemption) runs domain by
// domain, and the cheapest domain's victims win, so that an owner's
// reclaim frees one domain, not scattered nodes; a preferred job searches
// domain by domain first and across the partition when no domain does.
// The partition's first blocked borrower that requires one domain and
// waits for lendable GPUs also claims them (topoClaim), as a borrower
// without a reservation does.
//
// NeverFits. A job that requires a level (without a bounded wait) which no
// domain of its partition is big enough for is held, and refused at qsub,
// with ReasonTopologyNoDomain.
//
// Cost. Per-domain free GPUs and usable nodes are kept by nodeRefresh; a
// placement looks at the domains of one level, then the nodes of the
// domains it tries.

// Bounds of a topology.
const (
	maxTopoLevels = 8
	// MaxTopologyWait bounds TopologyRequest.Wait.
	MaxTopologyWait = 366 * 24 * time.Hour
)

// Topology is a network described as nested domains of nodes.
type Topology struct {
	Name string
	// Levels are the level names, outermost first; nodes sit below the
	// last one.
	Levels  []string
	Domains []Domain
}

// Domain is one domain of a Topology's level: a rack, a switch, an NVLink
// block.
type Domain struct {
	Level string
	Name  string
	Nodes []string
}

// TopologyRequest is a job's placement by topology.
type TopologyRequest struct {
	// Level is a level of the partition's topology; "" asks for none (the
	// partition's DefaultTopologyLevel applies, preferred).
	Level string
	// Preferred asks for as few domains as possible, best-effort, instead
	// of all nodes in one domain.
	Preferred bool
	// Wait, for a required request, is how long it stays required from
	// when the job began waiting; after that it is preferred. 0: always
	// required.
	Wait time.Duration
}

// validateTopologies checks the topologies of cfg and the partitions'
// references to them.
func validateTopologies(cfg Config) error {
	nodes := make(map[string]bool, len(cfg.Nodes))
	for _, n := range cfg.Nodes {
		nodes[n.Name] = true
		if err := checkPeers(n.Name, n.GPUPeers); err != nil {
			return err
		}
		if len(n.GPUPeers) > n.GPUs {
			return fmt.Errorf("%w: node %q: NVLink peers of %d GPUs, it has %d", ErrInvalid, n.Name, len(n.GPUPeers), n.GPUs)
		}
	}
	topos := map[string]*Topology{}
	for i := range cfg.Topologies {
		t := &cfg.Topologies[i]
		if t.Name == "" {
			return fmt.Errorf("%w: topology without a name", ErrInvalid)
		}
		if topos[t.Name] != nil {
			return fmt.Errorf("%w: duplicate topology %q", ErrInvalid, t.Name)
		}
		topos[t.Name] = t
		if len(t.Levels) == 0 || len(t.Levels) > maxTopoLevels {
			return fmt.Errorf("%w: topology %q: %d levels (1..%d)", ErrInvalid, t.Name, len(t.Levels), maxTopoLevels)
		}
		lv := map[string]int{}
		for i, l := range t.Levels {
			if l == "" {
				return fmt.Errorf("%w: topology %q: level without a name", ErrInvalid, t.Name)
			}
			if _, dup := lv[l]; dup {
				return fmt.Errorf("%w: topology %q: duplicate level %q", ErrInvalid, t.Name, l)
			}
			lv[l] = i
		}
		// in[level][node]: the domain holding node at level.
		in := make([]map[string]string, len(t.Levels))
		for i := range in {
			in[i] = map[string]string{}
		}
		names := map[[2]string]bool{}
		for _, d := range t.Domains {
			l, ok := lv[d.Level]
			switch {
			case !ok:
				return fmt.Errorf("%w: topology %q: domain %q: unknown level %q", ErrInvalid, t.Name, d.Name, d.Level)
			case d.Name == "":
				return fmt.Errorf("%w: topology %q: domain without a name", ErrInvalid, t.Name)
			case names[[2]string{d.Level, d.Name}]:
				return fmt.Errorf("%w: topology %q: duplicate %s %q", ErrInvalid, t.Name, d.Level, d.Name)
			}
			names[[2]string{d.Level, d.Name}] = true
			for _, n := range d.Nodes {
				if !nodes[n] {
					return fmt.Errorf("%w: topology %q: %s %q: unknown node %q", ErrInvalid, t.Name, d.Level, d.Name, n)
				}
				if o, dup := in[l][n]; dup {
					return fmt.Errorf("%w: topology %q: node %q in %s %q and %q", ErrInvalid, t.Name, n, d.Level, o, d.Name)
				}
				in[l][n] = d.Name
			}
		}
		// Nesting: the nodes of a domain sit in one domain of each outer
		// level.
		for _, d := range t.Domains {
			l := lv[d.Level]
			for o := 0; o < l; o++ {
				outer := ""
				for k, n := range d.Nodes {
					od, ok := in[o][n]
					if !ok {
						return fmt.Errorf("%w: topology %q: %s %q: node %q is in no %s (levels nest, outermost first)", ErrInvalid, t.Name, d.Level, d.Name, n, t.Levels[o])
					}
					if k > 0 && od != outer {
						return fmt.Errorf("%w: topology %q: %s %q spans %s %q and %q (levels nest, outermost first)", ErrInvalid, t.Name, d.Level, d.Name, t.Levels[o], outer, od)
					}
					outer = od
				}
			}
		}
	}
	for _, p := range cfg.Partitions {
		if p.Topology == "" {
			if p.DefaultTopologyLevel != "" {
				return fmt.Errorf("%w: partition %q: default topology level without a topology", ErrInvalid, p.Name)
			}
			continue
		}
		t := topos[p.Topology]
		if t == nil {
			return fmt.Errorf("%w: partition %q: unknown topology %q", ErrInvalid, p.Name, p.Topology)
		}
		if p.DefaultTopologyLevel != "" && levelIndex(t.Levels, p.DefaultTopologyLevel) < 0 {
			return fmt.Errorf("%w: partition %q: default topology level %q is not a level of %q", ErrInvalid, p.Name, p.DefaultTopologyLevel, t.Name)
		}
	}
	return nil
}

func levelIndex(levels []string, l string) int {
	for i, x := range levels {
		if x == l {
			return i
		}
	}
	return -1
}

// checkTopologyRequest checks a job's request on its own (its level
// against the partition's topology is the core's never-fits check).
func checkTopologyRequest(jb *Job) error {
	t := jb.Topology
	switch {
	case t.Level == "" && (t.Preferred || t.Wait != 0):
		return fmt.Errorf("%w: job %s: topology request without a level", ErrInvalid, jb.ID)
	case t.Wait < 0 || t.Wait > MaxTopologyWait:
		return fmt.Errorf("%w: job %s: topology wait %v (0..%v)", ErrInvalid, jb.ID, t.Wait, MaxTopologyWait)
	case t.Preferred && t.Wait != 0:
		return fmt.Errorf("%w: job %s: a preferred topology request with a wait", ErrInvalid, jb.ID)
	}
	return nil
}

// topoState is the core's view of the topologies: per partition, its
// domains; per node, its domain at each level.
type topoState struct {
	parts    []*ptopo    // by partition idx; nil: no topology
	nodeDoms [][]*domain // by node idx: its domain per level (nil: none)
	stamp    uint64      // bestDomain's: marks the domains tried
	nbuf     []*node     // pickIn's scratch
	dbuf     []*domain   // bestDomain's scratch
	// declared are the configuration's NVLink peers by node idx,
	// reported those NodeUp gave by node name (kept across reloads).
	declared [][]gpuSet
	reported map[string][]gpuSet
}

// ptopo is one partition's topology.
type ptopo struct {
	name   string
	levels []string
	doms   [][]*domain // per level, in configuration order
}

// domain is one domain's state: its nodes of the partition, and the free
// GPUs and usable nodes among them (nodeRefresh keeps them).
type domain struct {
	name   string
	level  int
	idx    int // position among its level's domains
	nodes  []*node
	free   int
	usable int
	byFree []int  // usable nodes by free GPUs
	seen   uint64 // placement scratch: tried in the placement of that stamp
}

// fitting counts d's usable nodes with at least g free GPUs.
func (d *domain) fitting(g int) int {
	k := 0
	for f := max(g, 0); f < len(d.byFree); f++ {
		k += d.byFree[f]
	}
	return k
}

// installTopology builds the topology state for the installed
// configuration; nodeRefresh then counts each node in.
func (s *Scheduler) installTopology() {
	s.topo = topoState{parts: make([]*ptopo, len(s.parts)), nodeDoms: make([][]*domain, len(s.nodes)),
		declared: make([][]gpuSet, len(s.nodes)), reported: s.topo.reported}
	if s.topo.reported == nil {
		s.topo.reported = map[string][]gpuSet{}
	}
	for _, n := range s.nodes {
		s.topo.declared[n.idx] = peerSets(n.cfg.GPUPeers)
	}
	byName := map[string]*Topology{}
	for i := range s.cfg.Topologies {
		byName[s.cfg.Topologies[i].Name] = &s.cfg.Topologies[i]
	}
	for _, p := range s.parts {
		t := byName[p.cfg.Topology]
		if t == nil {
			continue
		}
		pt := &ptopo{name: t.Name, levels: t.Levels, doms: make([][]*domain, len(t.Levels))}
		for _, dc := range t.Domains {
			l := levelIndex(t.Levels, dc.Level)
			d := &domain{name: dc.Name, level: l, idx: len(pt.doms[l])}
			for _, name := range dc.Nodes {
				n := s.nodeByName[name]
				if n == nil || n.part != p || n.ghost {
					continue
				}
				d.nodes = append(d.nodes, n)
				if s.topo.nodeDoms[n.idx] == nil {
					s.topo.nodeDoms[n.idx] = make([]*domain, len(t.Levels))
				}
				s.topo.nodeDoms[n.idx][l] = d
			}
			if len(d.nodes) > 0 {
				sortNodes(d.nodes)
				pt.doms[l] = append(pt.doms[l], d)
			}
		}
		s.topo.parts[p.idx] = pt
	}
}

// sortNodes orders nodes by their place in the partition.
func sortNodes(ns []*node) {
	for i := 1; i < len(ns); i++ {
		for k := i; k > 0 && ns[k].pidx < ns[k-1].pidx; k-- {
			ns[k], ns[k-1] = ns[k-1], ns[k]
		}
	}
}

// topoCount counts a usable node's free GPUs in (sign +1) or out (-1) of
// its domains.
func (s *Scheduler) topoCount(n *node, sign int) {
	if n.idx >= len(s.topo.nodeDoms) {
		return
	}
	for _, d := range s.topo.nodeDoms[n.idx] {
		if d != nil {
			d.free += sign * n.free
			d.usable += sign
			for len(d.byFree) <= n.free {
				d.byFree = append(d.byFree, 0)
			}
			d.byFree[n.free] += sign
		}
	}
}

// domOf is n's domain at level l, or nil.
func (s *Scheduler) domOf(n *node, l int) *domain {
	if n.idx >= len(s.topo.nodeDoms) || s.topo.nodeDoms[n.idx] == nil {
		return nil
	}
	return s.topo.nodeDoms[n.idx][l]
}

// topoMode is how a job is placed by topology now.
type topoMode uint8

const (
	topoPack      topoMode = iota // no request: best fit by domain, then anywhere
	topoPreferred                 // as few domains as possible
	topoRequired                  // one domain
)

// topoNeed says how j is placed in p by topology: pt nil when not by
// topology, and lv -1 with topoRequired when it requires a level p's
// topology lacks (it cannot be placed; without a bounded wait it never
// fits: neverFitsNow).
func (s *Scheduler) topoNeed(p *partition, j *job) (pt *ptopo, lv int, mode topoMode) {
	r := j.Topology
	required := r.Level != "" && !r.Preferred && (r.Wait == 0 || s.now.Before(s.topoDeadline(j)))
	if p == nil || p.idx >= len(s.topo.parts) || s.topo.parts[p.idx] == nil {
		if required {
			return nil, -1, topoRequired
		}
		return nil, -1, topoPack
	}
	pt = s.topo.parts[p.idx]
	if r.Level == "" {
		if l := levelIndex(pt.levels, p.cfg.DefaultTopologyLevel); l >= 0 {
			return pt, l, topoPreferred
		}
		return pt, len(pt.levels) - 1, topoPack
	}
	l := levelIndex(pt.levels, r.Level)
	switch {
	case required:
		if l < 0 {
			return nil, -1, topoRequired
		}
		return pt, l, topoRequired
	case l < 0:
		return nil, -1, topoPack
	}
	return pt, l, topoPreferred
}

// topoDeadline is when a bounded required request turns preferred.
func (s *Scheduler) topoDeadline(j *job) time.Time {
	from := j.readyAt
	if from.IsZero() {
		from = j.Submit
	}
	return from.Add(j.Topology.Wait)
}

// topoWake makes the pass look at p again when j's bounded request
// turns preferred (NextWake): it may span domains then.
func (s *Scheduler) topoWake(p *partition, j *job) {
	if j.Topology.Wait > 0 {
		p.fairWakeAt(s.topoDeadline(j))
	}
}

// fitsNow says whether place may put one node's part of j on n.
func (s *Scheduler) fitsNow(n *node, j *job) bool {
	return n.usable() && s.holds(n, j) && n.hasLabels(j) && n.takes(j)
}

// placeTopo is place in a partition with a topology (see the file's
// comment); handled is false when the plain placement is to be used.
func (s *Scheduler) placeTopo(p *partition, j *job) (allocs []Alloc, nodes []*node, ok, handled bool) {
	pt, lv, mode := s.topoNeed(p, j)
	if pt == nil {
		if mode == topoRequired {
			s.topoWake(p, j)
		}
		return nil, nil, false, mode == topoRequired
	}
	pref := s.nodeByName[j.PreferNode]
	if pref != nil && (pref.part != p || !s.fitsNow(pref, j)) {
		pref = nil
	}
	picked := s.bestDomain(pt.doms[lv], j, pref)
	if picked == nil {
		switch mode {
		case topoRequired:
			s.topoWake(p, j)
			return nil, nil, false, true
		case topoPack:
			return nil, nil, false, false
		}
		picked = s.fewestDomains(p, pt.doms[lv], j, pref)
		if picked == nil {
			return nil, nil, false, true
		}
	}
	allocs = make([]Alloc, len(picked))
	for i, n := range picked {
		allocs[i] = Alloc{Node: n.cfg.Name, GPUs: s.chooseGPUs(n, s.avail(n), j.GPUsPerNode)}
	}
	return allocs, picked, true, true
}

// bestDomain picks j's nodes in the domain of doms with the fewest free
// GPUs that holds all of it (the preferred node's domain first when it
// does); nil when none does.
func (s *Scheduler) bestDomain(doms []*domain, j *job, pref *node) []*node {
	s.topo.stamp++
	stamp := s.topo.stamp
	if pref != nil && len(doms) > 0 {
		if d := s.domOf(pref, doms[0].level); d != nil {
			d.seen = stamp
			if got := s.pickIn(d, j, pref); got != nil {
				return got
			}
		}
	}
	// The domains whose usable nodes could hold it, fewest free GPUs
	// first (configuration order on a tie).
	cands := s.topo.dbuf[:0]
	for _, d := range doms {
		if d.seen != stamp && d.usable >= j.Nodes && d.free >= j.total() && d.fitting(j.GPUsPerNode) >= j.Nodes {
			cands = append(cands, d)
		}
	}
	s.topo.dbuf = cands[:0]
	slices.SortFunc(cands, func(a, b *domain) int {
		if a.free != b.free {
			return a.free - b.free
		}
		return a.idx - b.idx
	})
	for _, d := range cands {
		if got := s.pickIn(d, j, nil); got != nil {
			return got
		}
	}
	return nil
}

// pickIn picks j.Nodes nodes of d that fit j now, pref first, then the
// fewest free GPUs (node order on a tie); nil when too few fit.
func (s *Scheduler) pickIn(d *domain, j *job, pref *node) []*node {
	fit := s.topo.nbuf[:0]
	for _, n := range d.nodes {
		if n != pref && s.fitsNow(n, j) {
			fit = append(fit, n)
		}
	}
	s.topo.nbuf = fit[:0]
	need := j.Nodes
	if pref != nil {
		need--
	}
	if len(fit) < need {
		return nil
	}
	out := make([]*node, 0, j.Nodes)
	if pref != nil {
		out = append(out, pref)
	}
	return append(out, leastFree(fit, need)...)
}

// leastFree returns the k nodes of ns with the fewest free GPUs, the
// earlier node on a tie, in that order (ns is reordered).
func leastFree(ns []*node, k int) []*node {
	for i := 0; i < k; i++ {
		m := i
		for x := i + 1; x < len(ns); x++ {
			if ns[x].free < ns[m].free || ns[x].free == ns[m].free && ns[x].pidx < ns[m].pidx {
				m = x
			}
		}
		ns[i], ns[m] = ns[m], ns[i]
	}
	return append([]*node(nil), ns[:k]...)
}

// fewestDomains picks j's nodes from as few domains as it can: the
// domains with the most fitting nodes first (the preferred node's domain
// before all), then nodes in no domain of the level; nil when the
// partition has too few fitting nodes.
func (s *Scheduler) fewestDomains(p *partition, doms []*domain, j *job, pref *node) []*node {
	type group struct {
		d   *domain
		fit []*node
	}
	var groups []group
	var loose []*node
	total := 0
	for _, d := range doms {
		var fit []*node
		for _, n := range d.nodes {
			if n != pref && s.fitsNow(n, j) {
				fit = append(fit, n)
			}
		}
		if len(fit) > 0 {
			groups = append(groups, group{d, fit})
			total += len(fit)
		}
	}
	lv := -1
	if len(doms) > 0 {
		lv = doms[0].level
	}
	for _, n := range p.nodes {
		if n != pref && s.domOf(n, lv) == nil && s.fitsNow(n, j) {
			loose = append(loose, n)
		}
	}
	need := j.Nodes
	out := make([]*node, 0, j.Nodes)
	if pref != nil {
		out = append(out, pref)
		need--
	}
	if total+len(loose) < need {
		return nil
	}
	var prefDom *domain
	if pref != nil && lv >= 0 {
		prefDom = s.domOf(pref, lv)
	}
	// Order: the preferred node's domain, then most fitting nodes, then
	// configuration order (insertion sort: stable, no map order).
	rank := func(a, b group) bool {
		if (a.d == prefDom) != (b.d == prefDom) {
			return a.d == prefDom
		}
		return len(a.fit) > len(b.fit)
	}
	for i := 1; i < len(groups); i++ {
		for k := i; k > 0 && rank(groups[k], groups[k-1]); k-- {
			groups[k], groups[k-1] = groups[k-1], groups[k]
		}
	}
	for _, g := range groups {
		if need == 0 {
			break
		}
		take := min(need, len(g.fit))
		out = append(out, leastFree(g.fit, take)...)
		need -= take
	}
	if need > 0 {
		out = append(out, leastFree(loose, need)...)
	}
	return out
}

// topoNeverFits says whether j requires a level (with no bounded wait)
// that no domain of its partition can ever hold: ReasonTopologyNoDomain.
func (s *Scheduler) topoNeverFits(p *partition, j *job) Reason {
	r := j.Topology
	if r.Level == "" || r.Preferred || r.Wait > 0 {
		return ReasonNone
	}
	if p.idx >= len(s.topo.parts) || s.topo.parts[p.idx] == nil {
		return ReasonTopologyNoDomain
	}
	pt := s.topo.parts[p.idx]
	l := levelIndex(pt.levels, r.Level)
	if l < 0 {
		return ReasonTopologyNoDomain
	}
	for _, d := range pt.doms[l] {
		if len(d.nodes) < j.Nodes {
			continue
		}
		k := 0
		for _, n := range d.nodes {
			if n.fitsDeclared(j) {
				k++
			}
		}
		if k >= j.Nodes {
			return ReasonNone
		}
	}
	return ReasonTopologyNoDomain
}

// topoWaiting says whether j, blocked for room, waits for its topology
// alone: it requires one domain now, and enough nodes of the partition
// would hold it if it did not.
func (s *Scheduler) topoWaiting(p *partition, j *job) bool {
	if _, _, mode := s.topoNeed(p, j); mode != topoRequired {
		return false
	}
	k := 0
	for _, n := range p.nodes {
		if s.fitsNow(n, j) {
			if k++; k >= j.Nodes {
				return true
			}
		}
	}
	return false
}

// topoResvNodes is the nodes a reservation for j may use: all of p's,
// or for a job that requires one domain the nodes of the domain where
// its j.Nodes earliest nodes are earliest (configuration order on a tie);
// nil when no domain can hold it.
func (s *Scheduler) topoResvNodes(p *partition, j *job, nb time.Time) []*node {
	pt, lv, mode := s.topoNeed(p, j)
	switch {
	case mode != topoRequired:
		return p.nodes
	case pt == nil:
		return nil
	}
	var best *domain
	var bestT time.Time
	for _, d := range pt.doms[lv] {
		if len(d.nodes) < j.Nodes {
			continue
		}
		ts := make([]time.Time, 0, len(d.nodes))
		for _, n := range d.nodes {
			if !n.usable() || !n.fitsDeclared(j) {
				continue
			}
			if t, ok := s.nodeTime(n, j); ok {
				if t.Before(nb) {
					t = nb
				}
				ts = append(ts, t)
			}
		}
		if len(ts) < j.Nodes {
			continue
		}
		sortTimes(ts)
		if t := ts[j.Nodes-1]; best == nil || t.Before(bestT) {
			best, bestT = d, t
		}
	}
	if best == nil {
		return nil
	}
	return best.nodes
}

// topoClaim makes the partition's first blocked borrower, when it
// requires one domain and waits for lendable GPUs (QuotaExhausted) with
// its reservation standing, also claim its g GPUs of the lendable pool
// for the rest of the pass, as a borrower without a reservation does
// (claim.go: bounded by claimMet). Its reservation keeps later borrowers
// off the GPUs of its one domain, but not off the lendable count: without
// the claim they took the lendable GPUs freed elsewhere, so that when its
// domain drained there were too few lendable GPUs left, and owners then
// filled the domain again (on the ITP trace, racks of 8 nodes: the 64-GPU
// borrowers waited half of their time so, and the jobs that required a
// rack waited 6.2 days at p95 instead of 3.9).
func (s *Scheduler) topoClaim(p *partition, sh *share, j *job, g int) {
	if !s.topoBound(p, j) {
		return
	}
	sh.reservedP += g
	if s.claimMet(p, g) {
		p.claimed += g
	}
}

// topoBound says whether j's reservation must stay in one domain (so the
// preferred node may not replace one of its nodes).
func (s *Scheduler) topoBound(p *partition, j *job) bool {
	_, _, mode := s.topoNeed(p, j)
	return mode == topoRequired
}

// topoSearch runs j's victim search domain by domain over nodes (the
// nodes the search may use) for a job placed by level, and returns the
// cheapest domain's search; required says the caller must not search
// across domains when none succeeded.
func (s *Scheduler) topoSearch(p *partition, j *job, nodes []*node, byNode map[*node][]int, newSearch func() *search) (best *search, required bool) {
	pt, lv, mode := s.topoNeed(p, j)
	if pt == nil || mode == topoPack {
		return nil, mode == topoRequired
	}
	for _, d := range pt.doms[lv] {
		if len(d.nodes) < j.Nodes {
			continue
		}
		var in []*node
		for _, n := range nodes {
			if s.domOf(n, lv) == d {
				in = append(in, n)
			}
		}
		if len(in) < j.Nodes {
			continue
		}
		se := newSearch()
		if se.pickNodes(in, byNode) && se.complete() && (best == nil || se.setCost().less(best.setCost())) {
			best = se
		}
	}
	return best, mode == topoRequired
}

// DomainsOf names the domains at level of a job's nodes in partition, in
// order of first appearance ("" for a node in none): what qstat shows. It
// changes nothing.
func (s *Scheduler) DomainsOf(partition, level string, nodes []string) []string {
	p := s.partByName[partition]
	if p == nil || p.idx >= len(s.topo.parts) || s.topo.parts[p.idx] == nil {
		return nil
	}
	l := levelIndex(s.topo.parts[p.idx].levels, level)
	if l < 0 {
		return nil
	}
	var out []string
	for _, name := range nodes {
		n := s.nodeByName[name]
		name := ""
		if n != nil {
			if d := s.domOf(n, l); d != nil {
				name = d.name
			}
		}
		dup := false
		for _, o := range out {
			dup = dup || o == name
		}
		if !dup {
			out = append(out, name)
		}
	}
	return out
}

// cloneTopologies copies ts deeply enough that the caller's slices may
// change.
func cloneTopologies(ts []Topology) []Topology {
	out := make([]Topology, len(ts))
	for i, t := range ts {
		out[i] = Topology{Name: t.Name, Levels: append([]string(nil), t.Levels...), Domains: make([]Domain, len(t.Domains))}
		for k, d := range t.Domains {
			out[i].Domains[k] = Domain{Level: d.Level, Name: d.Name, Nodes: append([]string(nil), d.Nodes...)}
		}
	}
	return out
}
