package sched

import "time"

// job is the core's record of one pending or running entry: a plain job, an
// array job (arr set: the entry stands for its indices not yet started) or an
// array subjob (sub set).
type job struct {
	Job
	state JobState
	share *share

	reason   Reason // current reason while pending
	reported Reason // the reason the last plan reported
	listed   bool   // in Scheduler.reasonLog

	allocs      []Alloc
	started     time.Time
	idleRun     bool      // marked idle (idle.go) ...
	idleStart   time.Time // ... for the run started then
	everStarted bool
	cancelled   bool // qdel'd while running (or while being preempted)
	failedFlag  bool // some subjob failed (array parents)

	// pending bookkeeping
	inReady   bool          // in its share's queue
	timeOK    bool          // NotBefore has passed
	depsOK    bool          // every dependency satisfied
	metDeps   []Dep         // dependencies dropped as met when it was restored (Submitted.Restored)
	neverFits bool          // the core set HoldSystem: the request can never fit
	nfReason  Reason        // why, while neverFits
	nfSince   time.Time     // since when, while neverFits (NeverFitsFailAfter)
	scanGen   uint64        // the pass (Scheduler.scanSeq) that last examined it
	shapeAt   uint64        // Scheduler.profEpoch+1 when shapeK was made (shapecache.go)
	shapeK    shape         // its shape, kept
	chargeK   int           // its charge, kept with shapeK
	readyAt   time.Time     // when its current wait began (zero while it runs)
	waited    time.Duration // its earlier waits (before it was preempted): fair share's wait credit

	// arrays
	arr    *arrayState // the array entry itself
	sub    bool        // an array subjob
	parent JobID       // a subjob's array id
	index  int         // a subjob's index

	// preemption
	nom      *nomination // this pending job's nomination (it preempts)
	victimOf *nomination // the nomination this preempting job was chosen for, if it still waits

	runIdx   int      // position in share.running while holding GPUs
	anodes   []*node  // the nodes of allocs
	gpuN     int      // GPUs held
	blocked  []gpuSet // Exclusive: per node, the GPUs it keeps from others (all of the node's)
	gone     bool     // removed from the core
	startGen uint64   // the Schedule call that started it

	resv *reservation // its reservation while pending (backfill)
}

// arrayState is what an array entry tracks beyond its Job.
type arrayState struct {
	indices    []int // all indices still to start, from pos on
	pos        int
	maxRunning int
	running    []*job // subjobs holding GPUs
	pendingSub int    // preempted subjobs waiting in the queue
	allStarted bool
	// leaving: leavePending is taking the entry out of the queue; the
	// ends of its waiting subjobs do not end it (its caller does).
	leaving bool
}

func (a *arrayState) remaining() int { return len(a.indices) - a.pos }

// total is the job's GPU request.
func (j *job) total() int { return j.Nodes * j.GPUsPerNode }

// charge is what j counts against its share's quota and borrowing and its
// user's GPU limit before it is placed: its request, but for a place=excl
// job every GPU of the nodes it will keep, counted as the partition's
// largest node for each of its nodes (exclusive.go). Once it holds nodes
// it counts their GPUs exactly (job.gpuN).
func (j *job) charge() int {
	if !j.Exclusive || j.share == nil || j.share.part == nil {
		return j.total()
	}
	return j.Nodes * max(j.GPUsPerNode, len(j.share.part.atLeast)-1)
}

// holding says whether the job holds GPUs.
func (j *job) holding() bool { return j.state != Pending && j.arr == nil }

// share is one share's state. A share removed from the configuration is kept
// as a ghost (removed set) while jobs of it remain.
type share struct {
	cfg     Share
	idx     int
	removed bool
	part    *partition

	q       shareQueue
	users   map[string]*userState // what each user holds in the share
	run     int                   // GPUs of Running and Killing jobs
	pre     int                   // GPUs of Preempting jobs
	nom     int                   // GPUs nominated for this share's preemptors
	running []*job
	pending int // pending entries

	dirty       bool
	rateMarked  bool      // in Scheduler.rates.dirty (rates.go)
	holdVer     uint64    // bumped when its holdings change (markRates)
	ends        endCache  // its running jobs' expected ends, sorted (shareends.go)
	useP        *shareUse // s.uses[cfg.Name] while useGen is Scheduler.usesGen+1 (rates.go)
	useGen      uint64
	lastScanned []*job
	blockedWQ   bool         // the last scan left a within-quota job blocked
	holdAll     bool         // per pass: a within-quota job is blocked for room; later ones wait
	inScan      bool         // the current pass looks at it
	resv        *reservation // the reservation of its first blocked within-quota job (backfill)
	resvQ       int          // per pass: of reservedQ, the reserved job's part
	resvB       int          // per pass: of reservedB, its reserved borrower's part
	xresv       *reservation // its first extra borrower reservation, when the partition's (bresv) is another share's
	claimJ      *job         // per pass: the set-aside job that claims the share's quota headroom (headclaim.go)
	claimQ      int          // per pass: of reservedQ, claimJ's part

	// per pass
	cur         mcursor
	budget      int
	p1Done      bool
	p1Headroom  bool // phase 1 stopped because no quota headroom was left
	cands       []*job
	seen        []seenShape // shapes examined in this pass without starting
	skips       int         // jobs passed over for their shape in this pass
	skippedCand bool        // one of them needed to borrow
	candPos     int
	reservedQ   int
	reservedB   int
	reservedP   int
	failCross   *failKey
	failIn      *failKey
	failFair    *failKey
	failFairEnd time.Time // when failFair's job would have ended
	blockedPrio int       // highest priority of a job blocked in this pass
	redirty     bool
	scanned     []*job

	// claimWait: a job of the share waits on other borrowers' claims
	// (pass.go, tryBorrow), set in the pass numbered claimWaitScan after
	// claimWaitAt of its partition's starts; a later start may leave
	// those claims unmet (claim.go).
	claimWait     bool
	claimWaitScan uint64
	claimWaitAt   int
}

// eff is what the share holds for quota purposes as seen by others (is it
// over quota? how much of the pool does it use?): its running jobs and its
// preemptors' nominations, not its jobs already leaving.
func (s *share) eff() int { return s.run + s.nom }

// usage is what the share's own quota and borrow checks count: eff plus
// its jobs that are being preempted, until they have exited (so a share
// never starts more than its quota on GPUs its victims still hold).
func (s *share) usage() int { return s.run + s.pre + s.nom }

func (s *share) inUse() int    { return s.run + s.pre }
func (s *share) reserve() bool { return s.cfg.Strategy == Reserve && !s.removed }
func (s *share) quota() int {
	if s.removed {
		return 0
	}
	return s.cfg.GPUs
}

// borrowCap is how many GPUs the share may hold beyond its quota; -1 for no
// limit.
func (s *share) borrowCap() int {
	if s.removed || s.cfg.Strategy != LendAndBorrow {
		return 0
	}
	if s.cfg.BorrowLimit < 0 {
		return -1
	}
	return s.cfg.GPUs * s.cfg.BorrowLimit / 100
}

// failKey remembers a request size for which a victim search failed in the
// current pass: a request at least as large cannot succeed either.
type failKey struct {
	nodes, gpus, cpus int
	mem               int64
	prio              int
	excl              bool // place=excl: it needed idle nodes
	// topo is the required topology its search kept to (one domain), if
	// any: it covers only jobs of the same request without a wait.
	topo TopologyRequest
}

// failed is the key of j's failed search, up to priority prio.
func failed(j *job, prio int) *failKey {
	k := &failKey{nodes: j.Nodes, gpus: j.GPUsPerNode, cpus: j.CPUsPerNode, mem: j.MemPerNode, prio: prio, excl: j.Exclusive}
	if j.Topology.Level != "" && !j.Topology.Preferred {
		k.topo = j.Topology
	}
	return k
}

// covers says whether a search for j would fail too: j asks at least as
// much, at no higher priority. A place=excl search (whole idle nodes) and
// one that shares its nodes are not comparable: an exclusive job's failure
// covers only exclusive jobs, and the other way round.
func (f *failKey) covers(j *job) bool {
	return f != nil && f.excl == j.Exclusive && (f.topo == TopologyRequest{} || f.topo == j.Topology && f.topo.Wait == 0) && j.Nodes >= f.nodes && j.GPUsPerNode >= f.gpus &&
		j.CPUsPerNode >= f.cpus && j.MemPerNode >= f.mem && j.Priority <= f.prio
}

// node is one node's state.
type node struct {
	cfg   Node
	idx   int // position in Scheduler.nodes
	pidx  int // position in part.nodes
	part  *partition
	gpus  int
	valid gpuSet // the GPUs that may be given: 0..gpus-1 less fenced
	up    bool
	drain bool
	ghost bool // no longer in the configuration; kept while jobs hold it

	held       gpuSet
	nominated  gpuSet
	leaving    gpuSet // held by preempting jobs: free once they exit
	fenced     gpuSet // sick GPUs no new job gets (gpufence.go)
	free       int    // valid, not held, not nominated
	spare      int    // leaving, not nominated: room no new victim is needed for
	usedCPU    int
	nomCPU     int
	leaveCPU   int // of usedCPU, the preempting jobs'
	usedMem    int64
	nomMem     int64
	leaveMem   int64
	cpus       int    // CPUs accounted (0: not accounted); see reqOn
	mem        int64  // memory accounted, bytes (0: not accounted)
	repCPU     int    // the CPUs NodeUp reported (0: none)
	repMem     int64  // the memory NodeUp reported (0: none)
	jobs       []*job // jobs holding GPUs (or CPUs) here
	excl       int    // Exclusive jobs holding it: while > 0 nothing else is placed here and free is 0
	exclNom    int    // Exclusive preemptors nominated here: likewise, and no GPU of it is spare
	bucket     int    // free-count bucket, -1 when not usable
	capCounted int    // GPUs counted in part.capUsable

	resvs   []*reservation // reservations holding GPUs here
	mask    gpuSet         // placeBF: reserved GPUs the job being placed may not use
	maskCPU int
	maskMem int64
	maskGen uint64 // mask is valid while it equals Scheduler.maskGen
	prof    relProfile
}

func (n *node) usable() bool { return n.up && !n.drain && !n.ghost }

// CPU and memory accounting. A node accounts CPUs when it has a CPU count
// (n.cpus: the configuration's, or when that is 0 the count the node
// reported in NodeUp) and memory likewise. On such a node every job counts:
// a job that names no CPUs counts one (PBS's default ncpus=1), so jobs
// without GPUs cannot pile up without bound; memory counts what the job
// asks for (0 when it names none).

// cpuReq is the CPUs a job counts on a node that accounts CPUs.
func (j *job) cpuReq() int { return max(1, j.CPUsPerNode) }

// reqOn is what j counts on n: CPUs and memory (0 where n does not
// account them).
func (n *node) reqOn(j *job) (int, int64) {
	c, m := 0, int64(0)
	if n.cpus > 0 {
		c = j.cpuReq()
	}
	if n.mem > 0 {
		m = j.MemPerNode
	}
	return c, m
}

// overCommitted says whether what n's jobs hold now and its nominations
// claim together exceed its CPUs or memory.
func (n *node) overCommitted() bool {
	return n.cpus > 0 && n.usedCPU+n.nomCPU > n.cpus || n.mem > 0 && n.usedMem+n.nomMem > n.mem
}

func (n *node) cpuFree() int {
	if n.cpus <= 0 {
		return -1
	}
	return max(0, n.cpus-n.usedCPU-n.nomCPU)
}

func (n *node) memFree() int64 {
	if n.mem <= 0 {
		return -1
	}
	return max(0, n.mem-n.usedMem-n.nomMem)
}

// fitsCPU says whether a job's CPU and memory request fits the given free
// amounts (-1: not accounted).
func fitsCPU(j *job, cpu int, mem int64) bool {
	if cpu >= 0 && j.cpuReq() > cpu {
		return false
	}
	if j.MemPerNode > 0 && mem >= 0 && j.MemPerNode > mem {
		return false
	}
	return true
}

// fitsDeclared says whether the job could ever run on n.
func (n *node) fitsDeclared(j *job) bool {
	if j.GPUsPerNode > n.gpus || !n.hasLabels(j) {
		return false
	}
	if n.cpus > 0 && j.cpuReq() > n.cpus {
		return false
	}
	if j.MemPerNode > 0 && n.mem > 0 && j.MemPerNode > n.mem {
		return false
	}
	return true
}

// capacity is what n accounts: the configured CPU and memory counts, or
// where one is 0 what the node reported.
func (n *node) capacity() (int, int64) {
	c, m := n.cfg.CPUs, n.cfg.MemBytes
	if c <= 0 {
		c = n.repCPU
	}
	if m <= 0 {
		m = n.repMem
	}
	return c, m
}

// setCapacity sets the node's CPU and memory counts (0: not accounted) and
// recounts what its jobs and nominations use of them.
func (s *Scheduler) setCapacity(n *node, cpus int, mem int64) {
	if n.cpus == cpus && n.mem == mem {
		return
	}
	n.cpus, n.mem = cpus, mem
	n.usedCPU, n.usedMem, n.leaveCPU, n.leaveMem, n.nomCPU, n.nomMem = 0, 0, 0, 0, 0, 0
	for _, j := range n.jobs {
		c, m := n.reqOn(j)
		n.usedCPU += c
		n.usedMem += m
		if j.state == Preempting {
			n.leaveCPU += c
			n.leaveMem += m
		}
	}
	if n.part != nil {
		for _, nm := range n.part.noms {
			if containsNode(nm.nodes, n) {
				c, m := n.reqOn(nm.j)
				n.nomCPU += c
				n.nomMem += m
			}
		}
	}
}

// partition is one partition's state, with its nodes indexed by free GPU
// count.
type partition struct {
	cfg    Partition
	idx    int
	nodes  []*node
	shares []*share // config shares in config order, then ghosts

	maxGPUs int
	buckets [][]uint64 // buckets[f]: bit set over pidx of usable nodes with f free GPUs
	bucketN []int

	usable    int // usable nodes
	capUsable int // GPUs of usable nodes
	freeAvail int // free GPUs on usable nodes

	reserveQuota int // sum of quotas of RESERVE shares
	nonRQuota    int // sum of quotas of the other shares
	nonRUsed     int // sum of eff() of non-RESERVE shares (ghosts included)
	reserveIdle  int // sum over RESERVE shares of max(0, quota-eff)
	overQuota    int // shares with eff() > quota

	spare     int  // GPUs of preempting jobs that no nomination holds (n.spare)
	accounts  bool // some node accounts CPUs or memory
	claimed   int  // per pass: lendable GPUs claimed by blocked borrowers
	soon      int  // per pass, once soonKnown: GPUs of running jobs expected to end within claimWindow
	soonKnown bool
	atLeast   []int // atLeast[g]: nodes declaring at least g GPUs
	declCap   int   // GPUs of all its nodes, usable or not
	noms      []*nomination
	neverFits []*job
	resvs     []*reservation // every reservation (backfill)
	bresv     *reservation   // the reservation of its first blocked borrower
	bsticky   *job           // under fair share: the borrower bresv stays with until it starts or leaves
	ri        *resvIndex     // the reservation index (resvindex.go), once a reservation needed it
	fairWake  time.Time      // when a fair preemption refused for time may be allowed (zero: none)
	dirty     bool           // capacity changed: scan every share
	anyDirty  bool           // some share is dirty
	starts    int            // jobs started since the end of its last pass
}

// poolCap is how many GPUs non-RESERVE shares may hold together:
// max(capacity - RESERVE quotas, non-RESERVE quotas).
func (p *partition) poolCap() int {
	c := p.capUsable - p.reserveQuota
	if p.nonRQuota > c {
		c = p.nonRQuota
	}
	return c
}

// slack is what non-RESERVE shares may still take from the pool.
func (p *partition) slack() int { return p.poolCap() - p.nonRUsed }

// borrowable is how many GPUs borrowers may take now: free GPUs minus the
// idle quota of RESERVE shares (and never more than the pool's slack).
func (p *partition) borrowable() int {
	b := p.freeAvail - p.reserveIdle
	if s := p.slack(); s < b {
		b = s
	}
	return b
}

// nomination reserves GPUs for a pending preemptor until its victims and
// every other preempting job that holds its GPUs (leaving for another
// preemptor, or for none) have exited.
type nomination struct {
	j       *job
	part    *partition
	allocs  []Alloc
	nodes   []*node
	victims []*job // the jobs preempted for it that have not exited
	forFit  bool   // free GPUs held it in total when it was made (issue 13 item 7)
	charge  int    // what it counts for its share and user (job.charge when it was made)
}

// reason is what its job says while it waits.
func (nm *nomination) reason() Reason {
	if nm.forFit {
		return ReasonReclaimingForFit
	}
	return ReasonPreempting
}

// hasLabels says whether n carries every label j selects.
func (n *node) hasLabels(j *job) bool {
	if len(j.Labels) == 0 {
		return true
	}
	for k, v := range j.Labels {
		if n.cfg.Labels[k] != v {
			return false
		}
	}
	return true
}
