package sched

import (
	"fmt"
	"maps"
	"sort"
	"time"
)

// Scheduler is the scheduling core. It is not safe for concurrent use: the
// driver serializes Apply, Schedule and the read-only views.
type Scheduler struct {
	cfg         Config
	parts       []*partition
	partByName  map[string]*partition
	nodes       []*node // config order, then ghosts
	nodeByName  map[string]*node
	shares      []*share // config order, then ghosts
	shareByName map[string]*share

	jobs       map[JobID]*job
	outcomes   map[JobID]outcome
	waiters    map[JobID][]*job
	orphanSubs map[JobID][]*job    // subjobs restored before their array
	begin      minHeap[beginEntry] // jobs waiting for their NotBefore time
	notifyQ    []notice

	reasonLog []*job
	plan      Plan
	now       time.Time
	gen       uint64
	scanSeq   uint64 // passes so far (job.scanGen)
	inPass    bool
	drop      []*job // queue removals deferred to the end of a pass

	uses    map[string]*shareUse // decayed usage by share name (fairshare.go)
	usageAt time.Time            // the time uses is brought to
	maskGen uint64               // placeBF's node masks
	masking bool                 // place keeps off the masks of maskGen
	relBuf  []time.Time
	holdBuf []relHold
	nodeBuf []int // per node of a partition, by pidx (fairHopeless)
	// exhaustive (tests only) runs every victim search in full, past the
	// bounds that cut hopeless ones short: the plans must not change.
	exhaustive bool
	cutShort   int // searches cut short (tests' coverage)
	// profEpoch changes with every event that may change a node's release
	// profile without a nodeRefresh (reservation.go).
	profEpoch uint64
	resvRank  uint64 // reservations made so far (reservation.rank)
	topo      topoState
	rates     rateState
	usesGen   uint64 // entries of uses made or dropped (useFor)
	// maskedNodes are the nodes with a mask of maskGen (freeFor).
	maskedNodes []*node
}

// New returns a core for cfg. Every node starts down; NodeUp makes it usable.
func New(cfg Config) (*Scheduler, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	s := &Scheduler{
		jobs:       map[JobID]*job{},
		outcomes:   map[JobID]outcome{},
		waiters:    map[JobID][]*job{},
		orphanSubs: map[JobID][]*job{},
		uses:       map[string]*shareUse{},
	}
	s.install(cfg)
	return s, nil
}

// Apply feeds one event to the core. Its effects that need no pass
// (requeues, finished and failed jobs) appear in the next Plan. An event that
// returns an error changes nothing.
func (s *Scheduler) Apply(ev Event) error {
	var err error
	switch e := ev.(type) {
	case Submitted:
		err = s.submitted(e)
	case Adopted:
		err = s.adopted(e)
	case Cancelled:
		err = s.cancelled(e)
	case Exited:
		err = s.exited(e)
	case Requeued:
		err = s.requeued(e)
	case StartFailed:
		err = s.startFailed(e)
	case PriorityChanged:
		err = s.priorityChanged(e)
	case HoldChanged:
		err = s.holdChanged(e)
	case JobAltered:
		err = s.jobAltered(e)
	case NodeUp:
		err = s.nodeUp(e)
	case NodeDown:
		err = s.nodeDown(e)
	case NodeDrained:
		err = s.nodeDrained(e)
	case NodeResumed:
		err = s.nodeResumed(e)
	case GPUsFenced:
		err = s.gpusFenced(e)
	case JobIdle:
		err = s.jobIdle(e)
	case ConfigReplaced:
		if err = validate(e.Config); err == nil {
			s.install(e.Config)
		}
	case DependencyOutcome:
		err = s.dependencyOutcome(e)
	case UsageRestored:
		err = s.usageRestored(e)
	case Forgotten:
		err = s.forgotten(e)
	case Moved:
		err = s.moved(e)
	case Swapped:
		err = s.swapped(e)
	default:
		err = fmt.Errorf("%w: event %T", ErrInvalid, ev)
	}
	switch ev.(type) {
	case Submitted, Exited, PriorityChanged, HoldChanged, DependencyOutcome, UsageRestored, Forgotten:
		// Pending jobs only, or a job leaving its nodes (nodeRefresh).
	default:
		s.profEpoch++
	}
	s.drainNotices()
	return err
}

// Schedule runs one scheduling pass at now and returns everything decided
// since the previous Plan.
func (s *Scheduler) Schedule(now time.Time) Plan {
	s.now = now
	s.gen++
	s.accrue(now)
	for s.begin.len() > 0 && !s.begin.top().at.After(now) {
		e := s.begin.pop()
		j := e.j
		if !j.gone && j.state == Pending && !j.timeOK && j.NotBefore.Equal(e.at) {
			j.timeOK = true
			s.refresh(j)
		}
	}
	for _, p := range s.parts {
		s.failNeverFits(p)
		if !p.fairWake.IsZero() && !now.Before(p.fairWake) {
			// A fair preemption refused for time may be allowed now.
			p.fairWake, p.dirty = time.Time{}, true
		}
	}
	for round := 0; ; round++ {
		s.inPass = true
		for _, p := range s.parts {
			if round == 0 {
				s.startNominated(p)
			}
			if p.dirty && round > 0 {
				// A capacity change seen in this call waits for the next
				// call; only jobs that became eligible are looked at now.
				p.dirty = false
				if p.anyDirty {
					s.pass(p)
				}
				p.dirty = true
			} else if p.dirty || p.anyDirty {
				s.pass(p)
			}
		}
		s.inPass = false
		for _, j := range s.drop {
			j.share.q.remove(j)
		}
		s.drop = s.drop[:0]
		// Jobs that started may let jobs waiting on them ("after") start in
		// this same call.
		if len(s.notifyQ) == 0 || round >= 3 {
			s.drainNotices()
			break
		}
		s.drainNotices()
	}
	s.snapshotRates()
	plan := s.plan
	s.plan = Plan{}
	plan.Now = now
	if len(s.reasonLog) > 0 {
		plan.Pending = make([]PendingReason, 0, len(s.reasonLog))
	}
	for _, j := range s.reasonLog {
		j.listed = false
		if j.gone || j.state != Pending || j.reason == j.reported {
			continue
		}
		j.reported = j.reason
		plan.Pending = append(plan.Pending, PendingReason{Job: j.ID, Reason: j.reason})
	}
	s.reasonLog = s.reasonLog[:0]
	return plan
}

// setReason records a pending job's reason; changes are reported by the
// next plan.
func (s *Scheduler) setReason(j *job, r Reason) {
	j.reason = r
	if r != j.reported && !j.listed {
		j.listed = true
		s.reasonLog = append(s.reasonLog, j)
	}
}

// waitReason is why a pending job may not be considered at all, or
// ReasonNone when it may.
func waitReason(j *job) Reason {
	switch {
	case j.share == nil || j.share.removed || j.share.part == nil:
		return ReasonShareRemoved
	case j.Hold&HoldSystem != 0 && j.neverFits:
		return j.nfReason
	case j.Hold != 0:
		return ReasonHeld
	case !j.depsOK:
		return ReasonDependency
	case !j.timeOK:
		return ReasonBeginTime
	}
	return ReasonNone
}

// refresh puts a pending entry in its share's queue or takes it out, after
// anything that decides whether it may start changed.
func (s *Scheduler) refresh(j *job) {
	if j.gone || j.state != Pending {
		return
	}
	if j.nom != nil {
		s.queueRemove(j)
		s.setReason(j, j.nom.reason())
		return
	}
	if r := waitReason(j); r != ReasonNone {
		s.queueRemove(j)
		s.setReason(j, r)
		return
	}
	if !j.inReady {
		j.inReady = true
		if j.readyAt.IsZero() { // eligible (Slurm's EligibleTime), or back after a preemption
			j.readyAt = j.Submit
			if s.now.After(j.Submit) {
				j.readyAt = s.now // the last pass's time: it became eligible since
			}
		}
		j.share.q.insert(j)
		s.setReason(j, ReasonPriority)
	}
	s.markDirty(j.share)
}

func (s *Scheduler) markDirty(sh *share) {
	sh.dirty = true
	if sh.part != nil {
		sh.part.anyDirty = true
	}
}

// queueRemove takes a pending entry out of its share's queue (and drops
// its reservation). Outside a pass, what the entry held back is looked at
// again in the next one: its share's later jobs (a blocked job stops its
// share's pass), and, when it reserved GPUs or had to borrow (its claim
// on the partition's lendable GPUs keeps other shares' borrowers waiting
// with Priority), every share of its partition. A pass decides the same
// again for what it takes out itself.
func (s *Scheduler) queueRemove(j *job) {
	if !s.inPass && (j.inReady || j.resv != nil) {
		if sh := j.share; sh != nil {
			s.markDirty(sh)
			if sh.part != nil && (j.resv != nil || sh.usage()+j.charge() > sh.quota()) {
				sh.part.dirty = true
			}
		}
	}
	s.unreserve(j)
	if !j.inReady {
		return
	}
	j.inReady = false
	if s.inPass {
		s.drop = append(s.drop, j)
		return
	}
	j.share.q.remove(j)
}

// retries returns the PreemptionRetries of j's partition.
func (s *Scheduler) retries(j *job) int {
	if j.share != nil && j.share.part != nil {
		return j.share.part.cfg.PreemptionRetries
	}
	return Unlimited
}

// nodeRetries returns the NodeFailureRetries of j's partition.
func (s *Scheduler) nodeRetries(j *job) int {
	if j.share != nil && j.share.part != nil {
		return j.share.part.cfg.NodeFailureRetries
	}
	return Unlimited
}

// startRetries returns the StartFailureRetries of j's partition.
func (s *Scheduler) startRetries(j *job) int {
	if j.share != nil && j.share.part != nil {
		return j.share.part.cfg.StartFailureRetries
	}
	return Unlimited
}

// NextWake is when a pending job's begin time (qsub -a) comes next, or a
// fair preemption refused for time (FairPreemptionAfter) may be allowed,
// for a driver to run Schedule then without polling; ok is false when no
// job waits for one. It may be early (the job left or changed its time
// since), never late.
func (s *Scheduler) NextWake() (t time.Time, ok bool) {
	if s.begin.len() > 0 {
		t, ok = s.begin.top().at, true
	}
	for _, p := range s.parts {
		if !p.fairWake.IsZero() && (!ok || p.fairWake.Before(t)) {
			t, ok = p.fairWake, true
		}
		if at, due := s.neverFitsWake(p); due && (!ok || at.Before(t)) {
			t, ok = at, true
		}
	}
	return t, ok
}

// beginEntry is a job waiting for its NotBefore time (Scheduler.begin).
type beginEntry struct {
	at  time.Time
	seq uint64
	j   *job
}

// less orders begin entries by time, then Seq, then job id.
func (a beginEntry) less(b beginEntry) bool {
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	return a.j.ID < b.j.ID
}

func (s *Scheduler) setNotBefore(j *job) {
	j.timeOK = j.NotBefore.IsZero()
	if !j.timeOK {
		s.begin.push(beginEntry{at: j.NotBefore, seq: j.Seq, j: j})
	}
}

// Job returns a view of one job, array job or running subjob.
func (s *Scheduler) Job(id JobID) (JobInfo, bool) {
	j, ok := s.jobs[id]
	if !ok {
		return JobInfo{}, false
	}
	info := JobInfo{Job: cloneJob(j.Job), State: j.state, Started: j.started}
	if j.state == Pending {
		info.Reason = j.reason
		if j.resv != nil {
			info.Estimate = j.resv.estimate()
		}
	}
	for _, a := range j.allocs {
		info.Allocs = append(info.Allocs, Alloc{Node: a.Node, GPUs: append([]int(nil), a.GPUs...)})
	}
	if a := j.arr; a != nil {
		info.Job.Array = &Array{Indices: append([]int{}, a.indices[a.pos:]...), MaxRunning: a.maxRunning}
		for _, r := range a.running {
			info.Running = append(info.Running, r.ID)
		}
		sort.Slice(info.Running, func(x, y int) bool { return s.jobs[info.Running[x]].index < s.jobs[info.Running[y]].index })
	}
	return info, true
}

func cloneJob(j Job) Job {
	j.Deps = append([]Dep(nil), j.Deps...)
	j.Labels = maps.Clone(j.Labels)
	if j.Array != nil {
		a := *j.Array
		a.Indices = append([]int(nil), a.Indices...)
		j.Array = &a
	}
	return j
}

// Shares returns every share's standing, in config order (then shares
// removed from the configuration that still have jobs). Lent spreads the
// GPUs borrowers use beyond the partition's unowned GPUs over the lending
// shares' idle quota, in config order.
func (s *Scheduler) Shares() []ShareUsage {
	out := make([]ShareUsage, 0, len(s.shares))
	type pool struct{ unowned, borrowed int }
	pools := map[*partition]*pool{}
	for _, p := range s.parts {
		sum := 0
		for _, sh := range p.shares {
			sum += sh.quota()
		}
		pl := &pool{unowned: max(0, p.capUsable-sum)}
		for _, sh := range p.shares {
			pl.borrowed += max(0, sh.inUse()-sh.quota())
		}
		pl.borrowed = max(0, pl.borrowed-pl.unowned)
		pools[p] = pl
	}
	for _, sh := range s.shares {
		if sh.removed && sh.pending == 0 && len(sh.running) == 0 {
			continue
		}
		u := ShareUsage{
			Share: sh.cfg.Name, Partition: sh.cfg.Partition, Strategy: sh.cfg.Strategy,
			Quota: sh.quota(), InUse: sh.inUse(), Borrowed: max(0, sh.inUse()-sh.quota()),
			Pending: sh.pending, Running: len(sh.running), FairUsage: s.shareFairUsage(sh),
		}
		if pl := pools[sh.part]; pl != nil && !sh.reserve() && !sh.removed {
			idle := max(0, sh.quota()-sh.inUse())
			u.Lent = min(idle, pl.borrowed)
			pl.borrowed -= u.Lent
		}
		out = append(out, u)
	}
	return out
}

// Nodes returns every node's standing, in config order (then removed nodes
// that jobs still hold).
func (s *Scheduler) Nodes() []NodeInfo {
	out := make([]NodeInfo, 0, len(s.nodes))
	for _, n := range s.nodes {
		if n.ghost && len(n.jobs) == 0 {
			continue
		}
		out = append(out, NodeInfo{
			Name: n.cfg.Name, Partition: n.cfg.Partition, Up: n.up && !n.ghost, Drained: n.drain,
			GPUs: n.gpus, UsedGPUs: n.held.list(),
		})
	}
	return out
}
