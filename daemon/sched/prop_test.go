package sched

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// world is a random workload driven against the core, with the driver's
// side simulated: it exits jobs, finishes preemptions, cancels, takes nodes
// down and up.
type world struct {
	topo   bool // topologies and topology requests (prop_topology_test.go)
	t      *rapid.T
	s      *Scheduler
	cfg    Config // the configuration now
	cfg0   Config // the first configuration, for replay
	log    []any  // events and schedule times, for replay
	plans  []Plan
	ids    []JobID
	seq    uint64
	now    time.Time
	shrunk bool // capacity went down at some point
	// reloaded: the configuration changed at some point; running jobs keep
	// what they hold, so only shares that start jobs must be within limits.
	reloaded bool
	exclGrew bool // a node grew under an Exclusive job
	cpus     bool // nodes may account CPUs and memory; jobs ask for them
	// walls: backfill is on, jobs have walltimes and the driver ends every
	// job by its walltime (as the nodes do).
	walls bool
	o     oracle
	cov   *coverage
	// refusedAt marks the log entries whose event the core refused.
	refusedAt map[int]bool
	forgot    map[JobID]bool // ids a Forgotten was accepted for: never submitted again (a driver never reuses an id)
	nextNode  int            // names of nodes a reload adds
	// rich: the world draws the rarer events and job knobs too (labels,
	// holds, begin times, dependencies, refused events); the others keep
	// the plain workload that makes preemptions frequent.
	rich bool
	// burst: the first so many submissions go to the second share (a
	// contention world: genConfig).
	burst int
	// calm: no reloads and fewer exits, so that the contention lasts
	// (TestPropFairPreemption).
	calm bool
	// nomsBefore: the preemptors holding a nomination before the pass
	// (checkFairPreemption).
	nomsBefore map[*job]bool
	// shrunkCap: nodes that reported fewer CPUs or less memory at some
	// time (their running jobs may hold more than they have now).
	shrunkCap map[string]bool
	// victims and changes: the needless-victim oracle's record
	// (prop_victim_test.go).
	victims     map[JobID]victimRec
	preStarts   map[JobID][]Alloc // where the victims' preemptors started
	changes     int
	victimExits map[JobID]int // victims' exits by preemptor ("": all)
	// nfSince: when the world first saw each job pending as never
	// fitting (prop_neverfits_test.go).
	nfSince map[JobID]nfSeen
}

// genConfig draws a configuration; with cpus, nodes may account CPUs and
// memory (and jobs ask for them, or for no GPU at all). One time in four
// (always with contend) it is one with borrowers contending for a
// lender's idle GPUs; the bool says which.
func genConfig(t *rapid.T, cpus, contend bool) (Config, bool) {
	retries := rapid.SampledFrom([]int{Unlimited, 0, 1, 2}).Draw(t, "retries")
	nodeRetries := rapid.SampledFrom([]int{Unlimited, 0, 1}).Draw(t, "nodeRetries")
	cfg := Config{Partitions: []Partition{{Name: "p", PreemptionRetries: retries, NodeFailureRetries: nodeRetries,
		StartFailureRetries: rapid.SampledFrom([]int{Unlimited, 0, 1}).Draw(t, "startRetries"),
		CheckpointsLocal:    rapid.Bool().Draw(t, "ckptLocal"),
		DefaultWalltime:     time.Duration(rapid.SampledFrom([]int{0, 0, 20}).Draw(t, "defaultWall0")) * time.Second,
		NeverFitsFailAfter:  time.Duration(rapid.SampledFrom([]int{0, 0, 5, 30}).Draw(t, "neverFitsFail")) * time.Second}}}
	labels := rapid.Bool().Draw(t, "labels")
	cfg.FairShare = rapid.Bool().Draw(t, "fairShare")
	cfg.UsageHalfLife = time.Duration(rapid.SampledFrom([]int{0, 60, 600}).Draw(t, "halfLife")) * time.Second
	cfg.FairPreemption = rapid.Bool().Draw(t, "fairPreemption")
	cfg.FairPreemptionAfter = time.Duration(rapid.SampledFrom([]int{0, 3, 10}).Draw(t, "fairAfter")) * time.Second
	nn := rapid.IntRange(1, 5).Draw(t, "nodes")
	for i := 0; i < nn; i++ {
		n := Node{Name: fmt.Sprintf("n%d", i), Partition: "p", GPUs: rapid.SampledFrom([]int{1, 2, 4, 4, 6, 8, 8}).Draw(t, "gpus")}
		if labels {
			n.Labels = map[string]string{"gpu_type": rapid.SampledFrom(gpuTypes[:2]).Draw(t, "gpuType")}
		}
		if cpus {
			n.CPUs = rapid.SampledFrom([]int{0, 1, 2, 4, 8}).Draw(t, "cpus")
			n.MemBytes = rapid.SampledFrom([]int64{0, 4, 16}).Draw(t, "mem")
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	ns := rapid.IntRange(2, 4).Draw(t, "shares")
	for i := 0; i < ns; i++ {
		cfg.Shares = append(cfg.Shares, Share{
			Name: fmt.Sprintf("s%d", i), Partition: "p",
			GPUs:              rapid.SampledFrom([]int{0, 1, 2, 4, 4, 6, 8, 10}).Draw(t, "quota"),
			Strategy:          Strategy(rapid.IntRange(0, 2).Draw(t, "strategy")),
			BorrowLimit:       rapid.SampledFrom([]int{Unlimited, 0, 50, 100, 300}).Draw(t, "borrow"),
			InSharePreemption: rapid.Bool().Draw(t, "inshare"),
			FairWeight:        rapid.SampledFrom([]int{0, 1, 3}).Draw(t, "weight"),
		})
		drawUserRules(t, &cfg.Shares[i])
	}
	if contend = contend || rapid.IntRange(0, 3).Draw(t, "contention") == 0; contend {
		cfg.FairShare, cfg.FairPreemption = true, true
		cfg.FairPreemptionAfter = time.Duration(rapid.IntRange(0, 3).Draw(t, "contendAfter")) * time.Second
		for ; ns < 3; ns++ {
			cfg.Shares = append(cfg.Shares, Share{Name: fmt.Sprintf("s%d", ns), Partition: "p"})
		}
		// Borrowers contending for a lender's idle GPUs, the shape a
		// fair-share preemption needs (seldom drawn otherwise): a LEND
		// share and LEND_AND_BORROW shares with small quotas and no limit.
		capacity := 0
		cfg.Nodes = cfg.Nodes[:min(2, len(cfg.Nodes))] // few GPUs: the burst fills them
		for i := range cfg.Nodes {
			cfg.Nodes[i].GPUs = rapid.SampledFrom([]int{4, 8}).Draw(t, "contendGPUs")
			capacity += cfg.Nodes[i].GPUs
		}
		lent := capacity
		for i := 1; i < ns; i++ {
			cfg.Shares[i].Strategy, cfg.Shares[i].BorrowLimit = LendAndBorrow, Unlimited
			cfg.Shares[i].GPUs = rapid.IntRange(0, min(2, capacity/(2*ns))).Draw(t, "contendQuota")
			lent -= cfg.Shares[i].GPUs
		}
		cfg.Shares[0].Strategy, cfg.Shares[0].GPUs = Lend, lent
		cfg.Partitions[0].PreemptionRetries = rapid.SampledFrom([]int{Unlimited, 2, 3}).Draw(t, "contendRetries")
		return cfg, true
	}
	if rapid.Bool().Draw(t, "pureBorrower") {
		// A share that only borrows: what reclaim takes back.
		cfg.Shares[ns-1].GPUs, cfg.Shares[ns-1].Strategy, cfg.Shares[ns-1].BorrowLimit = 0, LendAndBorrow, Unlimited
	}
	return cfg, false
}

// apply feeds an event to the core. Random events may be refused; a
// refusal changes nothing a driver can see (checked here), and the replay
// without the refused events gives the same plans.
func (w *world) apply(ev Event) error {
	w.log = append(w.log, ev)
	before := w.s.view()
	if e, ok := ev.(NodeUp); ok {
		if n := w.s.nodeByName[e.Node]; n != nil && n.excl > 0 && e.GPUs > n.gpus {
			// An Exclusive job keeps the node's new GPUs too; a restart
			// charges them to its share (exclusive.go), which may leave
			// it over its limits until the job ends, as a reload may.
			w.exclGrew = true
		}
	}
	err := w.s.Apply(ev)
	if err != nil {
		w.refusedAt[len(w.log)-1] = true
		w.cov.add("refused " + eventKind(ev))
		if d := diffView(before, w.s.view()); d != "" {
			w.t.Fatalf("refused %T %+v (%v) changed the core: %s\n%s", ev, ev, err, d, w.dump())
		}
		return err
	}
	w.cov.add(eventKind(ev))
	w.noteChange(ev)
	w.accepted(ev, before)
	w.checkIncremental()
	return nil
}

// checkIncremental asserts that the state the core keeps between passes
// equals a computation from scratch (incremental_test.go).
func (w *world) checkIncremental() {
	if err := w.s.checkIncremental(); err != nil {
		w.t.Fatalf("incremental state: %v\n%s", err, w.dump())
	}
}

func (w *world) schedule() Plan {
	w.now = w.now.Add(time.Duration(rapid.IntRange(1, 5).Draw(w.t, "dt")) * time.Second)
	if w.walls {
		w.honourWalltimes()
		w.checkProfiles()
	}
	w.log = append(w.log, w.now)
	before := w.shareHolds()
	pre := w.pendingBefore()
	nodesBefore := map[string]NodeInfo{}
	for _, n := range w.s.Nodes() {
		nodesBefore[n.Name] = n
	}
	p := w.s.Schedule(w.now)
	w.plans = append(w.plans, p)
	if w.s.cutShort > 0 {
		w.cov.add("fair search cut short")
		w.s.cutShort = 0
	}
	for _, st := range p.Starts {
		if !slices.Contains(w.ids, st.Job) {
			w.ids = append(w.ids, st.Job)
		}
	}
	w.coverPlan(p)
	w.observe(p)
	w.checkStarts(p, pre, nodesBefore)
	if w.topo {
		w.checkTopoHolds()
	}
	w.checkNeedlessVictims(p)
	w.noteVictims(p)
	w.checkWorld()
	w.check(p)
	w.checkFairPreemption(p, before)
	w.checkNeverFitsFail(p)
	w.checkUserLimits()
	w.checkIdleClaims()
	w.checkIncremental()
	if w.walls {
		w.checkReservations()
	}
	if err := w.s.reasonsTruthful(p); err != nil {
		w.t.Fatalf("after pass: %v\n%s", err, w.dump())
	}
	return p
}

// jobsIn returns the known jobs in a state, in id order.
func (w *world) jobsIn(states ...JobState) []JobID {
	var out []JobID
	for _, id := range w.ids {
		if info, ok := w.s.Job(id); ok && slices.Contains(states, info.State) && info.Job.Array == nil {
			out = append(out, id)
		}
	}
	return out
}

// restartMark in the event log stands for a controller restart: the core is
// rebuilt from what the old one reports (restore), as the controller does
// from its spool.
type restartMark struct{}

// reloadMark in the event log is a ConfigReplaced whose configuration the
// world also takes as its own.
type reloadMark struct{ cfg Config }

func (w *world) step(nodeEvents bool) {
	kinds := []string{"submit", "submit", "submit", "submit", "submit", "exit", "exit", "exit", "exitvictim", "exitvictim", "cancel",
		"schedule", "schedule", "schedule", "schedule", "schedule", "prio", "hold",
		// Events aimed at the middle of a preemption: at a preemptor
		// waiting for its victims, or at the victims' nodes.
		"cancelpre", "holdpre", "release", "priopre", "alterpre", "reload", "restart",
	}
	if w.rich {
		// The rarer events and the ones meant to be refused.
		kinds = append(kinds, "startfail", "requeue", "alter", "holdx", "outcome", "forget", "cancelsub", "move", "swap", "bad", "bad", "bad", "bad", "badreload")
	}
	if nodeEvents {
		kinds = append(kinds, "down", "up", "drain", "resume", "downvictim", "drainnom", "upgpus")
	}
	if w.calm {
		kinds = []string{"submit", "submit", "submit", "schedule", "schedule", "schedule", "exit", "exitvictim", "exitvictim",
			"cancel", "prio", "hold", "release", "cancelpre", "holdpre", "priopre", "restart"}
	}
	kind := rapid.SampledFrom(kinds).Draw(w.t, "kind")
	switch kind {
	case "submit":
		w.submit()
	case "exit":
		if r := w.jobsIn(Running, Killing); len(r) > 0 {
			w.apply(Exited{ID: rapid.SampledFrom(r).Draw(w.t, "victim"), ExitStatus: rapid.SampledFrom([]int{0, 0, 0, 1}).Draw(w.t, "status")})
		}
	case "exitvictim":
		if r := w.jobsIn(Preempting); len(r) > 0 {
			w.apply(Exited{ID: rapid.SampledFrom(r).Draw(w.t, "victim"), ExitStatus: 271})
		}
	case "cancel":
		if len(w.ids) > 0 {
			w.apply(Cancelled{ID: rapid.SampledFrom(w.ids).Draw(w.t, "cancel")})
		}
	case "cancelpre":
		if pre := w.preemptors(); len(pre) > 0 {
			w.apply(Cancelled{ID: rapid.SampledFrom(pre).Draw(w.t, "cancelpre")})
		}
	case "prio":
		if len(w.ids) > 0 {
			w.apply(PriorityChanged{ID: rapid.SampledFrom(w.ids).Draw(w.t, "pj"), Priority: rapid.IntRange(0, 3).Draw(w.t, "np"), Order: rapid.IntRange(-1, 1).Draw(w.t, "no")})
		}
	case "priopre":
		if pre := w.preemptors(); len(pre) > 0 {
			w.apply(PriorityChanged{ID: rapid.SampledFrom(pre).Draw(w.t, "ppj"), Priority: rapid.IntRange(0, 3).Draw(w.t, "np"), Order: rapid.IntRange(-1, 1).Draw(w.t, "no")})
		}
	case "alterpre":
		if pre := w.preemptors(); len(pre) > 0 {
			id := rapid.SampledFrom(pre).Draw(w.t, "apj")
			info, _ := w.s.Job(id)
			wall := info.Job.Walltime
			if w.walls {
				wall = time.Duration(rapid.SampledFrom([]int{0, 1, 10}).Draw(w.t, "newWall")) * time.Second // qalter -l walltime
			}
			w.apply(JobAltered{ID: id, Priority: info.Job.Priority, Order: info.Job.Order, Walltime: wall})
		}
	case "hold":
		if len(w.ids) > 0 {
			w.apply(HoldChanged{ID: rapid.SampledFrom(w.ids).Draw(w.t, "hj"), Set: rapid.Bool().Draw(w.t, "set"), Bit: HoldUser})
		}
	case "holdpre":
		if pre := w.preemptors(); len(pre) > 0 {
			w.apply(HoldChanged{ID: rapid.SampledFrom(pre).Draw(w.t, "hpj"), Set: true, Bit: rapid.SampledFrom([]Hold{HoldUser, HoldAdmin}).Draw(w.t, "bit")})
		}
	case "release":
		var held []JobID
		for _, id := range w.ids {
			if info, ok := w.s.Job(id); ok && info.Job.Hold&(HoldUser|HoldAdmin) != 0 {
				held = append(held, id)
			}
		}
		if len(held) > 0 {
			w.apply(HoldChanged{ID: rapid.SampledFrom(held).Draw(w.t, "rj"), Set: false, Bit: rapid.SampledFrom([]Hold{HoldUser, HoldAdmin}).Draw(w.t, "rbit")})
		}
	case "reload":
		w.reload()
	case "restart":
		w.cov.add("restart")
		w.log = append(w.log, restartMark{})
		w.changes++
		w.observe(w.s.plan) // what the old core decided since its last plan; the driver keeps it
		w.s = restore(w.t, w.s, w.cfg, w.cov)
		w.o.restarted = true
	case "down":
		w.shrunk = true
		w.apply(NodeDown{Node: rapid.SampledFrom(w.cfg.Nodes).Draw(w.t, "node").Name})
	case "downvictim", "drainnom":
		// A node that a preemption in flight uses.
		var on []string
		for _, id := range w.jobsIn(Preempting) {
			info, _ := w.s.Job(id)
			for _, a := range info.Allocs {
				on = append(on, a.Node)
			}
		}
		if len(on) == 0 {
			break
		}
		w.shrunk = true
		n := rapid.SampledFrom(on).Draw(w.t, "vnode")
		if rapid.Bool().Draw(w.t, "downNotDrain") {
			w.apply(NodeDown{Node: n})
		} else {
			w.apply(NodeDrained{Node: n})
		}
	case "drain":
		w.shrunk = true
		w.apply(NodeDrained{Node: rapid.SampledFrom(w.cfg.Nodes).Draw(w.t, "node").Name})
	case "up":
		w.apply(NodeUp{Node: rapid.SampledFrom(w.cfg.Nodes).Draw(w.t, "node").Name})
	case "resume":
		w.apply(NodeResumed{Node: rapid.SampledFrom(w.cfg.Nodes).Draw(w.t, "node").Name})
	case "upgpus":
		// A node comes up with another GPU count than declared (and reports
		// its CPUs and memory).
		n := rapid.SampledFrom(w.cfg.Nodes).Draw(w.t, "node")
		ev := NodeUp{Node: n.Name, GPUs: rapid.IntRange(0, 9).Draw(w.t, "upGPUs")}
		if w.cpus {
			ev.CPUs = rapid.SampledFrom([]int{0, 1, 4}).Draw(w.t, "upCPUs")
			ev.MemBytes = rapid.SampledFrom([]int64{0, 2, 16}).Draw(w.t, "upMem")
		}
		if ev.CPUs > 0 && n.CPUs == 0 || ev.MemBytes > 0 && n.MemBytes == 0 {
			w.shrunkCap[n.Name] = true // the reported count is the node's (none declared)
		}
		for _, x := range w.s.Nodes() {
			if x.Name == n.Name && ev.GPUs > 0 && ev.GPUs < x.GPUs {
				w.shrunk = true // capacity went down
			}
		}
		if w.apply(ev) == nil && ev.GPUs > 0 && ev.GPUs != n.GPUs {
			w.cov.add("node gpus changed")
		}
	case "startfail", "requeue", "alter", "holdx", "outcome", "forget", "cancelsub", "move", "swap", "bad", "badreload":
		w.stepMore(kind)
	default:
		w.schedule()
	}
	if err := w.s.consistent(w.shrunkCap); err != nil {
		w.t.Fatalf("after %T: %v\n%s", w.log[len(w.log)-1], err, w.dump())
	}
}

// preemptors returns the pending jobs waiting for their victims to exit.
func (w *world) preemptors() []JobID {
	var out []JobID
	for _, id := range w.ids {
		if info, ok := w.s.Job(id); ok && info.State == Pending && info.Reason == ReasonPreempting {
			out = append(out, id)
		}
	}
	return out
}

// userNames are the users of random jobs.
var userNames = []string{"u0", "u1", "u2"}

// drawUserRules draws a share's fair share and per-user keys.
func drawUserRules(t *rapid.T, sh *Share) {
	sh.FairWeight = rapid.SampledFrom([]int{0, 0, 1, 5}).Draw(t, "weight")
	sh.FairShareUsers = rapid.Bool().Draw(t, "fairUsers")
	sh.MaxRunningJobsPerUser = rapid.SampledFrom([]int{0, 0, 1, 2}).Draw(t, "maxJobsUser")
	sh.MaxGPUsPerUser = rapid.SampledFrom([]int{0, 0, 2, 6}).Draw(t, "maxGPUsUser")
}

// checkUserLimits asserts that no user holds more jobs or GPUs in a share
// than its limits allow (preemptors' nominations counted). A reload may
// lower a limit under what runs, and a node that grew under an Exclusive
// job charges its new GPUs after a restart; the check then waits for the
// next world.
func (w *world) checkUserLimits() {
	if w.reloaded || w.exclGrew {
		return
	}
	type key struct{ share, user string }
	jobs, gpus := map[key]int{}, map[key]int{}
	for _, id := range w.ids {
		info, ok := w.s.Job(id)
		if !ok || info.Job.Array != nil {
			continue
		}
		if info.State == Pending && info.Reason != ReasonPreempting && info.Reason != ReasonReclaimingForFit {
			continue
		}
		k := key{info.Job.Share, info.Job.User}
		jobs[k]++
		gpus[k] += w.charged(id)
	}
	for k, n := range jobs {
		sc, ok := w.shareCfgOK(k.share)
		if !ok {
			continue
		}
		if sc.MaxRunningJobsPerUser > 0 && n > sc.MaxRunningJobsPerUser || sc.MaxGPUsPerUser > 0 && gpus[k] > sc.MaxGPUsPerUser {
			w.t.Fatalf("user %s in share %s: %d jobs and %d GPUs held or nominated, limits %d and %d\n%s",
				k.user, k.share, n, gpus[k], sc.MaxRunningJobsPerUser, sc.MaxGPUsPerUser, w.dump())
		}
	}
}

// charged is what a held or nominated job counts for its share and user:
// the GPUs it keeps (a place=excl job all of its nodes', exclusive.go), or
// its nomination's charge.
func (w *world) charged(id JobID) int {
	j := w.s.jobs[id]
	if j.nom != nil {
		return j.nom.charge
	}
	return j.gpuN
}

// userHolds counts a user's jobs and GPUs in a share: held, or nominated
// for a preemptor.
func (w *world) userHolds(share, user string) (jobs, gpus int) {
	for _, id := range w.ids {
		info, ok := w.s.Job(id)
		if !ok || info.Job.Array != nil || info.Job.Share != share || info.Job.User != user {
			continue
		}
		if info.State == Pending && info.Reason != ReasonPreempting && info.Reason != ReasonReclaimingForFit {
			continue
		}
		jobs++
		gpus += w.charged(id)
	}
	return jobs, gpus
}

// reload replaces the configuration: the same nodes and shares, with new
// quotas, strategies, borrow limits, in-share preemption and retries.
func (w *world) reload() {
	cfg := cloneConfig(w.cfg)
	cfg.Partitions[0].PreemptionRetries = rapid.SampledFrom([]int{Unlimited, 0, 1, 2}).Draw(w.t, "newRetries")
	cfg.Partitions[0].NodeFailureRetries = rapid.SampledFrom([]int{Unlimited, 0, 1}).Draw(w.t, "newNodeRetries")
	for i := range cfg.Shares {
		if !rapid.Bool().Draw(w.t, "changeShare") {
			continue
		}
		sh := &cfg.Shares[i]
		old := *sh
		sh.GPUs = rapid.IntRange(0, 10).Draw(w.t, "newQuota")
		sh.Strategy = Strategy(rapid.IntRange(0, 2).Draw(w.t, "newStrategy"))
		sh.BorrowLimit = rapid.SampledFrom([]int{Unlimited, 0, 50, 100, 300}).Draw(w.t, "newBorrow")
		sh.InSharePreemption = rapid.Bool().Draw(w.t, "newInshare")
		drawUserRules(w.t, sh)
		if sh.GPUs != old.GPUs {
			w.cov.add("reload quota")
		}
		if sh.Strategy != old.Strategy {
			w.cov.add("reload strategy")
		}
	}
	cfg.FairShare = rapid.Bool().Draw(w.t, "newFairShare")
	cfg.FairPreemption = rapid.Bool().Draw(w.t, "newFairPreemption")
	// [scheduler] backfill and default_walltime may change on a reload.
	cfg.Backfill = rapid.Bool().Draw(w.t, "newBackfill")
	if cfg.Backfill != w.cfg.Backfill {
		w.cov.add("reload backfill")
	}
	cfg.Partitions[0].DefaultWalltime = time.Duration(rapid.SampledFrom([]int{0, 5, 20}).Draw(w.t, "newDefaultWall")) * time.Second
	w.reshape(&cfg)
	if err := validate(cfg); err != nil {
		return // a configuration the controller would refuse
	}
	w.log = append(w.log, reloadMark{cfg: cfg})
	w.changes++
	if err := w.s.Apply(ConfigReplaced{Config: cfg}); err != nil {
		w.t.Fatalf("reload refused: %v", err)
	}
	w.cov.add("ConfigReplaced")
	w.countConfig(cfg)
	old := w.cfg
	w.cfg = cfg
	w.reloaded = true
	for _, n := range cfg.Nodes {
		if _, ok := w.nodeIn(old, n.Name); !ok {
			w.apply(NodeUp{Node: n.Name}) // a new node registers
		}
	}
}

// nodeIn says whether cfg has a node of that name.
func (w *world) nodeIn(cfg Config, node string) (Node, bool) {
	for _, n := range cfg.Nodes {
		if n.Name == node {
			return n, true
		}
	}
	return Node{}, false
}

// restore builds a new core from what old reports, as the controller does
// after a restart: nodes as they were, every job holding GPUs adopted (a
// preempting one as preempting, a killed one cancelled again), then every
// pending entry submitted. Nominations are not restored: preemptors plan
// again, their victims exit as orphans.
func restore(t *rapid.T, old *Scheduler, cfg Config, cov *coverage) *Scheduler {
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range old.Nodes() {
		if n.Up {
			o := old.nodeByName[n.Name]
			if err := s.Apply(NodeUp{Node: n.Name, GPUs: n.GPUs, CPUs: o.repCPU, MemBytes: o.repMem}); err != nil {
				t.Fatalf("restore: node %s: %v", n.Name, err)
			}
		}
		if n.Drained {
			_ = s.Apply(NodeDrained{Node: n.Name})
		}
	}
	// How the jobs that left ended, for the dependencies on them (the
	// controller keeps them in its spool).
	var gone []JobID
	for id := range old.outcomes {
		gone = append(gone, id)
	}
	slices.Sort(gone)
	for _, id := range gone {
		o := old.outcomes[id]
		if err := s.Apply(DependencyOutcome{ID: id, ExitStatus: int(o.exit), Started: o.started, Cancelled: o.cancelled, Failed: o.failed}); err != nil {
			t.Fatalf("restore: outcome of %s: %v", id, err)
		}
	}
	// Jobs in submission order (a dependency is on an earlier job).
	var ids []JobID
	for _, j := range old.sortedJobs() {
		ids = append(ids, j.ID)
	}
	var killed []JobID
	for _, id := range ids {
		info, _ := old.Job(id)
		if info.Job.Array != nil || info.State == Pending {
			continue
		}
		if slices.ContainsFunc(old.jobs[id].anodes, func(n *node) bool { return n.ghost }) {
			cov.add("adopted on a removed node")
		}
		if err := s.Apply(Adopted{Job: info.Job, Allocs: info.Allocs, Started: info.Started, Preempting: info.State == Preempting}); err != nil {
			t.Fatalf("restore: adopt %s: %v", id, err)
		}
		cov.add("Adopted")
		if info.State == Killing || old.jobs[id].cancelled {
			// Deleted while running, or while being preempted (the
			// controller's record says so; the view shows preempting).
			killed = append(killed, id)
		}
	}
	for _, id := range ids {
		info, _ := old.Job(id)
		if info.Job.Array == nil && info.State != Pending {
			continue
		}
		jb := info.Job
		jb.Hold &^= HoldSystem // the core sets it again if it still applies
		if old.jobs[id].share.removed {
			cov.add("restored on a removed share")
		}
		if err := s.Apply(Submitted{Job: jb, Restored: true, Ran: old.jobs[id].everStarted}); err != nil {
			t.Fatalf("restore: submit %s: %v", id, err)
		}
		if old.jobs[id].arr != nil && old.jobs[id].cancelled {
			killed = append(killed, id) // a deleted array whose subjobs still run
		}
	}
	for _, id := range killed {
		if _, ok := s.jobs[id]; !ok {
			continue // an array with nothing left finished at once
		}
		if err := s.Apply(Cancelled{ID: id}); err != nil {
			t.Fatalf("restore: cancel %s: %v", id, err)
		}
	}
	// Usage last, as the controller does: the adopted jobs count from the
	// time the old core recorded it.
	if err := s.Apply(UsageRestored{State: old.Usage()}); err != nil {
		t.Fatalf("restore: usage: %v", err)
	}
	cov.add("UsageRestored")
	return s
}

// check asserts the invariants that hold after every pass.
func (w *world) check(plan Plan) {
	t := w.t
	nodes := map[string]NodeInfo{}
	used := map[string]map[int]JobID{}
	for _, n := range w.s.Nodes() {
		nodes[n.Name] = n
		used[n.Name] = map[int]JobID{}
	}
	for _, st := range plan.Starts {
		info, ok := w.s.Job(st.Job)
		if !ok {
			t.Fatalf("started job %s unknown", st.Job)
		}
		if info.State != Running || !reflect.DeepEqual(info.Allocs, st.Allocs) {
			t.Fatalf("start %s: state %v allocs %v, plan %v", st.Job, info.State, info.Allocs, st.Allocs)
		}
	}
	for _, id := range w.ids {
		info, ok := w.s.Job(id)
		if !ok || info.Job.Array != nil || info.State == Pending {
			if ok && info.State == Pending && info.Reason == ReasonNone {
				t.Fatalf("pending job %s has no reason", id)
			}
			continue
		}
		j := info.Job
		if len(info.Allocs) != j.Nodes {
			t.Fatalf("job %s: %d allocations for %d nodes", id, len(info.Allocs), j.Nodes)
		}
		seen := map[string]bool{}
		for _, a := range info.Allocs {
			if seen[a.Node] {
				t.Fatalf("job %s: node %s twice", id, a.Node)
			}
			seen[a.Node] = true
			if len(a.GPUs) != j.GPUsPerNode {
				t.Fatalf("job %s: %d GPUs on %s, asked %d", id, len(a.GPUs), a.Node, j.GPUsPerNode)
			}
			for _, g := range a.GPUs {
				// A node that came back (or was reconfigured) with fewer
				// GPUs leaves its running jobs what they hold; a start
				// is checked against the count (checkStarts).
				if g < 0 || g >= maxNodeGPUs {
					t.Fatalf("job %s: GPU %d out of range on %s", id, g, a.Node)
				}
				if other, busy := used[a.Node][g]; busy {
					t.Fatalf("GPU %d of %s given to %s and %s", g, a.Node, other, id)
				}
				used[a.Node][g] = id
			}
		}
	}
	// place=excl: a node an Exclusive job holds holds no other job, in
	// either direction (whichever started first).
	on := map[string][]JobID{}
	excl := map[string]JobID{}
	for _, id := range w.jobsIn(Running, Preempting, Killing) {
		info, _ := w.s.Job(id)
		for _, a := range info.Allocs {
			on[a.Node] = append(on[a.Node], id)
			if info.Job.Exclusive {
				excl[a.Node] = id
			}
		}
	}
	for name, id := range excl {
		if len(on[name]) != 1 {
			t.Fatalf("node %s: Exclusive job %s shares it with %v\n%s", name, id, on[name], w.dump())
		}
	}
	for name, n := range nodes {
		var got []int
		for g := range used[name] {
			got = append(got, g)
		}
		slices.Sort(got)
		if !slices.Equal(got, n.UsedGPUs) && !(len(got) == 0 && len(n.UsedGPUs) == 0) {
			t.Fatalf("node %s: used %v, jobs hold %v", name, n.UsedGPUs, got)
		}
	}
	capUsable := 0
	for _, n := range nodes {
		if n.Up && !n.Drained {
			capUsable += n.GPUs
		}
	}
	preempting := len(w.jobsIn(Preempting)) > 0
	startedIn := map[string]bool{}
	for _, st := range plan.Starts {
		startedIn[st.Share] = true
	}
	rq, nrq, nru := 0, 0, 0
	for _, u := range w.s.Shares() {
		sc, ok := w.shareCfgOK(u.Share)
		switch {
		case !ok:
			// Removed from the configuration: its jobs run out, none starts.
			if startedIn[u.Share] {
				t.Fatalf("a job of removed share %s started\n%s", u.Share, w.dump())
			}
		case (w.reloaded || w.exclGrew) && !startedIn[u.Share]:
			// A new configuration may leave a share over its new limits
			// until its jobs end; it may not start more.
		case sc.Strategy == Reserve || sc.Strategy == Lend:
			if u.InUse > u.Quota {
				t.Fatalf("%v share %s holds %d GPUs, quota %d\n%s", sc.Strategy, u.Share, u.InUse, u.Quota, w.dump())
			}
		case sc.Strategy == LendAndBorrow:
			if sc.BorrowLimit >= 0 && u.InUse > u.Quota+u.Quota*sc.BorrowLimit/100 {
				t.Fatalf("share %s holds %d GPUs, quota %d, borrow limit %d%%\n%s", u.Share, u.InUse, u.Quota, sc.BorrowLimit, w.dump())
			}
		}
		if sc.Strategy == Reserve {
			rq += u.Quota
		} else {
			nrq += u.Quota
			nru += u.InUse
		}
	}
	// RESERVE idle quota is never used by others: non-RESERVE shares
	// together hold at most the capacity minus the RESERVE quotas (or their
	// own quotas when nodes are missing). Checked when no preemption is in
	// flight (a victim still holds the GPUs its preemptor will take) and
	// capacity never shrank (that may leave borrowers in place until an
	// owner reclaims).
	if !preempting && !w.shrunk && !w.reloaded && !w.exclGrew && nru > max(capUsable-rq, nrq) {
		t.Fatalf("non-RESERVE shares hold %d GPUs; capacity %d, RESERVE quotas %d, other quotas %d\n%s", nru, capUsable, rq, nrq, w.dump())
	}
}

// dump returns the event log with the plans, for a failure message.
func (w *world) dump() string {
	out := ""
	k := 0
	for i, e := range w.log {
		switch e := e.(type) {
		case time.Time:
			p := w.plans[k]
			k++
			out += fmt.Sprintf("schedule -> starts %v preempts %v requeued %v finished %v failed %v\n", p.Starts, p.Preempts, p.Requeued, p.Finished, p.Failed)
		default:
			if w.refusedAt[i] {
				out += "(refused) "
			}
			out += fmt.Sprintf("%T %+v\n", e, e)
		}
	}
	return out
}

func (w *world) shareCfg(name string) Share {
	for _, s := range w.cfg.Shares {
		if s.Name == name {
			return s
		}
	}
	w.t.Fatalf("unknown share %s", name)
	return Share{}
}

// checkLiveness runs passes until nothing more happens, then asserts that a
// pending job that fits inside its share's quota, for which a node has room
// once pure borrowers (quota-0 LEND_AND_BORROW shares, always over quota)
// leave it, is not left waiting for any reason but Priority.
func (w *world) checkLiveness() {
	for i := 0; i < 10; i++ {
		p := w.schedule()
		if len(p.Starts) == 0 && len(p.Preempts) == 0 {
			break
		}
	}
	// Jobs still leaving (preempted or killed) hold GPUs and pool room the
	// oracle does not model, nor shares left over quota by a reload.
	if len(w.jobsIn(Preempting, Killing)) > 0 || w.reloaded {
		return
	}
	usage := map[string]ShareUsage{}
	for _, u := range w.s.Shares() {
		usage[u.Share] = u
	}
	room := map[string]int{}
	size := map[string]int{}
	for _, n := range w.s.Nodes() {
		if n.Up && !n.Drained {
			room[n.Name] = n.GPUs - len(n.UsedGPUs)
			size[n.Name] = n.GPUs
		}
	}
	// An Exclusive job keeps its whole node: no room there, unless a
	// pure borrower's, which reclaim frees whole.
	for _, id := range w.jobsIn(Running) {
		info, _ := w.s.Job(id)
		if !info.Job.Exclusive {
			continue
		}
		for _, a := range info.Allocs {
			if _, ok := room[a.Node]; ok {
				room[a.Node] = 0
			}
		}
	}
	for _, id := range w.jobsIn(Running) {
		info, _ := w.s.Job(id)
		sc := w.shareCfg(info.Job.Share)
		if sc.Strategy == LendAndBorrow && sc.GPUs == 0 {
			for _, a := range info.Allocs {
				if _, ok := room[a.Node]; ok {
					if info.Job.Exclusive {
						room[a.Node] = size[a.Node]
					} else {
						room[a.Node] += len(a.GPUs)
					}
				}
			}
		}
	}
	// An Exclusive job has room on a node only where every job is a pure
	// borrower's (reclaim frees it whole).
	clear := map[string]bool{}
	for n := range room {
		clear[n] = true
	}
	for _, id := range w.jobsIn(Running) {
		info, _ := w.s.Job(id)
		if sc := w.shareCfg(info.Job.Share); sc.Strategy != LendAndBorrow || sc.GPUs != 0 {
			for _, a := range info.Allocs {
				clear[a.Node] = false
			}
		}
	}
	for _, id := range w.ids {
		info, ok := w.s.Job(id)
		if !ok || info.State != Pending || info.Job.Array != nil || info.Job.Hold != 0 || info.Job.Nodes != 1 {
			continue
		}
		// Waiting for its dependencies, begin time or array's %max
		// (checkReason checks those reasons), or selecting labels that
		// only some nodes have.
		if info.Reason == ReasonDependency || info.Reason == ReasonArrayLimit || info.Job.NotBefore.After(w.now) || len(info.Job.Labels) > 0 {
			continue
		}
		g := info.Job.GPUsPerNode
		if info.Job.Exclusive {
			g = w.s.jobs[id].charge() // its whole node (exclusive.go)
		}
		u := usage[info.Job.Share]
		if u.InUse+g > u.Quota {
			continue
		}
		switch info.Reason {
		case ReasonFairShare:
			w.t.Fatalf("job %s within its share's quota held back by fair share\n%s", id, w.dump())
		case ReasonUserJobLimit, ReasonUserGPULimit:
			// Only a limit the user really is at holds it.
			sc := w.shareCfg(info.Job.Share)
			n, gpus := w.userHolds(info.Job.Share, info.Job.User)
			if info.Reason == ReasonUserJobLimit && (sc.MaxRunningJobsPerUser == 0 || n < sc.MaxRunningJobsPerUser) ||
				info.Reason == ReasonUserGPULimit && (sc.MaxGPUsPerUser == 0 || gpus+g <= sc.MaxGPUsPerUser) {
				w.t.Fatalf("job %s: %v, but its user holds %d jobs and %d GPUs (limits %d, %d)\n%s",
					id, info.Reason, n, gpus, sc.MaxRunningJobsPerUser, sc.MaxGPUsPerUser, w.dump())
			}
			continue
		}
		for n, r := range room {
			if info.Job.Exclusive {
				if !clear[n] {
					continue
				}
				r = size[n]
			}
			if r >= g && size[n] >= g && info.Reason != ReasonPriority && !(w.walls && info.Reason == ReasonBackfillWouldDelay) {
				w.t.Fatalf("job %s (%d GPUs, share %s %d/%d) pending with %v although node %s has room after reclaim\n%s",
					id, g, u.Share, u.InUse, u.Quota, info.Reason, n, w.dump())
			}
		}
	}
}

// checkIdleClaims asserts that a blocked borrower's claim does not keep
// idle lendable GPUs from another borrower without bound (issue 30 item
// 2): when no running job of the partition is expected to end within
// claimWindow (no walltime and no default, as the generator often makes
// them) and every other pending borrower needs more than the lendable
// GPUs, no claim can be met, so a borrower that fits the lendable GPUs
// and a node's free GPUs is not left waiting with Priority or FairShare.
// It looks only at a share's one pending entry (a share's own queue order
// may hold it) when no job of its share started in the pass and the next
// pass will not look at its share anyway (after a start the core may look
// again at a share whose jobs of that shape it passed over), plain one-node jobs, worlds without CPU accounting, reservations
// or nominations.
func (w *world) checkIdleClaims() {
	if w.cpus {
		return
	}
	deadline := w.now.Add(claimWindow)
	for _, p := range w.s.parts {
		if len(p.resvs) > 0 || len(p.noms) > 0 {
			continue
		}
		soon := 0 // GPUs of running jobs expected to end within the window
		for _, sh := range p.shares {
			for _, x := range sh.running {
				wall := x.Walltime
				if wall <= 0 {
					wall = p.cfg.DefaultWalltime
				}
				if x.state != Running || wall > 0 && !x.started.Add(wall).After(deadline) {
					soon += x.gpuN
				}
			}
		}
		lend := p.borrowable()
		free := map[*node]int{}
		for _, n := range p.nodes {
			if n.usable() && n.excl == 0 {
				free[n] = n.free
			}
		}
		// The pending borrowers of the partition, by share.
		var borrowers []*job
		pending := map[*share]int{}
		for _, id := range w.s.sortedIDs() {
			j := w.s.jobs[id]
			if j.state != Pending || j.share == nil || j.share.part != p {
				continue
			}
			pending[j.share]++
			if j.share.usage()+j.charge() > j.share.quota() {
				borrowers = append(borrowers, j)
			}
		}
		for _, j := range borrowers {
			if j.reason != ReasonPriority && j.reason != ReasonFairShare {
				continue
			}
			sh := j.share
			b := sh.usage() + j.charge() - sh.quota()
			startedNow := false // a start in this call: the next pass may look again
			for _, x := range sh.running {
				startedNow = startedNow || x.startGen == w.s.gen
			}
			if startedNow || sh.dirty || p.dirty || pending[sh] != 1 || j.arr != nil || j.Nodes != 1 || j.Exclusive || len(j.Labels) > 0 ||
				!mayBorrow(sh, b) || j.charge() > lend || userLimit(sh, j) != ReasonNone || j.Hold != 0 ||
				!j.depsOK || !j.timeOK || !j.inReady || j.nom != nil {
				continue
			}
			fits := false
			for _, f := range free {
				fits = fits || f >= j.GPUsPerNode
			}
			others := true // no other borrower's claim can be met in time
			for _, o := range borrowers {
				if o != j && o.charge() <= lend+soon {
					others = false
				}
			}
			if fits && others {
				w.t.Fatalf("borrower %s (%d GPUs) waits with %v although %d lendable GPUs are idle and no claim can be met within %v\n%s",
					j.ID, j.total(), j.reason, lend, claimWindow, w.dump())
			}
		}
	}
}

func runWorld(t *rapid.T, cov *coverage, nodeEvents bool) *world {
	return runWorldBF(t, cov, nodeEvents, false, false)
}

// runWorldBF is runWorld, with backfill and walltimes when walls is set;
// calm is a contention world with the calm event mix (world.calm).
func runWorldBF(t *rapid.T, cov *coverage, nodeEvents, walls, calm bool) *world {
	cfg, contend := genConfig(t, nodeEvents, calm)
	if walls {
		cfg.Backfill = true
		cfg.FairShare = contend || rapid.Bool().Draw(t, "fairShare")
		cfg.Partitions[0].DefaultWalltime = time.Duration(rapid.SampledFrom([]int{0, 5, 20}).Draw(t, "defaultWall")) * time.Second
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, s: s, cfg: cfg, cfg0: cfg, cpus: nodeEvents, walls: walls, now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		o: newOracle(), cov: cov, refusedAt: map[int]bool{}, forgot: map[JobID]bool{}, shrunkCap: map[string]bool{}}
	w.rich = rapid.IntRange(0, 2).Draw(t, "rich") > 0
	if contend {
		// The first borrower's burst takes the lender's idle GPUs; the
		// other borrowers' jobs come after it.
		w.burst = rapid.IntRange(3, 10).Draw(t, "burst")
		w.calm = calm
	}
	w.countConfig(cfg)
	for _, n := range cfg.Nodes {
		w.apply(NodeUp{Node: n.Name})
	}
	steps := rapid.SampledFrom([]int{10, 30, 60, 90, 120}).Draw(t, "steps")
	for i := 0; i < steps; i++ {
		w.step(nodeEvents)
	}
	w.schedule()
	return w
}

// replay runs the log again on a new core and asserts that it gives the
// same plans: determinism. It does so three times (map order differs from
// run to run): the second time without the events the core refused (a
// refusal changes nothing), the third with every victim search run in full
// (the bounds that cut hopeless searches short change no plan).
func (w *world) replay() {
	w.replayOnce(false, false)
	w.replayOnce(true, false)
	w.replayOnce(false, true)
}

func (w *world) replayOnce(skipRefused, exhaustive bool) {
	cur := w.cfg0
	s, err := New(cur)
	if err != nil {
		w.t.Fatal(err)
	}
	s.exhaustive = exhaustive
	k := 0
	for i, e := range w.log {
		switch e := e.(type) {
		case time.Time:
			p := s.Schedule(e)
			if !reflect.DeepEqual(p, w.plans[k]) {
				w.t.Fatalf("replay (refused events skipped: %v, exhaustive searches: %v): plan %d differs:\n%+v\n%+v", skipRefused, exhaustive, k, p, w.plans[k])
			}
			k++
		case Event:
			if skipRefused && w.refusedAt[i] {
				continue
			}
			_ = s.Apply(e)
		case reloadMark:
			_ = s.Apply(ConfigReplaced{Config: e.cfg})
			cur = e.cfg
		case restartMark:
			s = restore(w.t, s, cur, nil)
			s.exhaustive = exhaustive
		}
	}
}

// TestPropInvariants: every event kind and configuration knob, node
// events included; the invariants after every event and pass; the same
// plans on replay. More checks: go test -run Prop -rapid.checks=20000.
func TestPropInvariants(t *testing.T) {
	propCheck(t, append(slices.Clone(worldKinds), nodeKinds...), func(t *rapid.T, cov *coverage) {
		w := runWorld(t, cov, true)
		w.replay()
	})
}

func TestPropReserveAndLiveness(t *testing.T) {
	propCheck(t, worldKinds, func(t *rapid.T, cov *coverage) {
		w := runWorld(t, cov, false)
		w.checkLiveness()
		w.replay()
	})
}

// honourWalltimes ends every job that has run its walltime, as the nodes
// do: the walltimes reservations count with are honoured.
func (w *world) honourWalltimes() {
	for _, id := range w.jobsIn(Running, Preempting, Killing) {
		j := w.s.jobs[id]
		if wall := w.s.walltime(j); wall > 0 && !j.started.Add(wall).After(w.now) {
			w.apply(Exited{ID: id, ExitStatus: 271})
		}
	}
}

// checkReservations asserts, after a pass, that every reservation belongs
// to a pending job and promises GPUs of usable nodes that no running job
// holds past the reservation's start: no job started since (backfilled or
// not) delays it.
func (w *world) checkReservations() {
	for _, p := range w.s.parts {
		for _, r := range p.resvs {
			if r.j.gone || r.j.state != Pending || r.j.resv != r {
				w.t.Fatalf("reservation of %s, which is not a pending job holding it\n%s", r.j.ID, w.dump())
			}
			if len(r.nodes) != r.j.Nodes || r.start.Before(w.now.Add(-time.Minute)) {
				w.t.Fatalf("reservation of %s: %d nodes for %d, start %v at %v", r.j.ID, len(r.nodes), r.j.Nodes, r.start, w.now)
			}
			for k, n := range r.nodes {
				want := r.j.GPUsPerNode
				if r.j.Exclusive {
					want = n.valid.count() // it keeps the whole node
				}
				if !n.usable() || r.gpus[k].count() != want || !r.gpus[k].andNot(n.valid).isEmpty() {
					w.t.Fatalf("reservation of %s on %s: node usable %v, GPUs %v\n%s", r.j.ID, n.cfg.Name, n.usable(), r.gpus[k].list(), w.dump())
				}
				for _, x := range n.jobs {
					if x.state != Running {
						continue // leaving: it frees its GPUs now
					}
					for m, y := range x.anodes {
						if y == n && !x.keeps(m).and(r.gpus[k]).isEmpty() && w.s.endFrom(x, x.started).After(r.start) {
							w.t.Fatalf("job %s (started %v, walltime %v) holds GPUs %v of %s reserved for %s from %v\n%s",
								x.ID, x.started, w.s.walltime(x), x.allocs[m].GPUs, n.cfg.Name, r.j.ID, r.start, w.dump())
						}
					}
				}
			}
		}
	}
}

// checkProfiles asserts, before a Schedule call, that every node's release
// profile the next call will keep from earlier ones is the one made afresh.
func (w *world) checkProfiles() {
	for _, p := range w.s.parts {
		for _, n := range p.nodes {
			got := &n.prof
			if got.gen == 0 || !got.stable || got.epoch != w.s.profEpoch || !n.nominated.isEmpty() {
				continue // made again anyway
			}
			gotRel := append([]time.Time(nil), got.rel...)
			gotSorted := append([]time.Time(nil), got.sorted...)
			gotHolds := sortedHolds(got.holds)
			n.prof = relProfile{}
			fresh := w.s.profile(n)
			if !reflect.DeepEqual(gotRel, fresh.rel) || !reflect.DeepEqual(gotSorted, fresh.sorted) || !reflect.DeepEqual(gotHolds, sortedHolds(fresh.holds)) {
				w.t.Fatalf("node %s: kept release profile %v %v differs from a fresh one %v %v\n%s", n.cfg.Name, gotRel, gotHolds, fresh.rel, fresh.holds, w.dump())
			}
		}
	}
}

func sortedHolds(h []relHold) []relHold {
	out := append([]relHold{}, h...)
	slices.SortFunc(out, func(a, b relHold) int {
		if c := a.end.Compare(b.end); c != 0 {
			return c
		}
		if a.cpu != b.cpu {
			return a.cpu - b.cpu
		}
		return int(a.mem - b.mem)
	})
	return out
}

// TestPropBackfill: with backfill on and walltimes honoured, a reservation
// is never delayed: after every pass no running job holds a reserved GPU
// past the reservation's start. Every event kind of the other property
// tests is generated (node events, reloads and restarts included).
func TestPropBackfill(t *testing.T) {
	propCheck(t, append(slices.Clone(worldKinds), nodeKinds...), func(t *rapid.T, cov *coverage) {
		w := runWorldBF(t, cov, true, true, false)
		w.replay()
	})
}

// TestPropFairPreemption: borrowers contending for a lender's idle GPUs
// (a contention world, with backfill and walltimes or without), so that
// fair-share preemptions happen (the other worlds seldom contend long
// enough): the invariants after every pass (checkFairPreemption among
// them), the same plans on replay, exhaustive searches included.
func TestPropFairPreemption(t *testing.T) {
	propCheck(t, []string{"plan preempt fair_share", "fair search cut short", "preempt cross_share", "restart"}, func(t *rapid.T, cov *coverage) {
		w := runWorldBF(t, cov, rapid.Bool().Draw(t, "nodeEvents"), rapid.Bool().Draw(t, "walls"), true)
		w.replay()
	})
}

// TestPropBackfillLiveness: with backfill on, a job that fits its quota
// and a node's room waits only for jobs ahead of it (Priority) or for a
// reservation it would delay.
func TestPropBackfillLiveness(t *testing.T) {
	propCheck(t, worldKinds, func(t *rapid.T, cov *coverage) {
		w := runWorldBF(t, cov, false, true, false)
		w.checkLiveness()
		w.replay()
	})
}

// shareHold is what a share holds before a pass: usage (its own checks)
// and eff (what others see).
type shareHold struct{ usage, eff int }

func (w *world) shareHolds() map[string]shareHold {
	m := map[string]shareHold{}
	for name, sh := range w.s.shareByName {
		m[name] = shareHold{sh.usage(), sh.eff()}
	}
	w.nomsBefore = w.nominatedJobs()
	return m
}

// nominatedJobs is the set of preemptors holding a nomination.
func (w *world) nominatedJobs() map[*job]bool {
	m := map[*job]bool{}
	for _, p := range w.s.parts {
		for _, nm := range p.noms {
			m[nm.j] = true
		}
	}
	return m
}

// checkFairPreemption checks the fair-share preemptions of a plan: only
// with fair share and fair preemption on; for a job that must borrow, of a
// LEND_AND_BORROW share, that waited FairPreemptionAfter; victims that ran
// as long, with a retry to spare. When a share's only victims in the plan
// are fair-share ones for one other share, and it started nothing, it is
// still at or over its quota after the pass (no within-quota job is ever a
// victim), and it borrows per weight at least what the preemptor's share
// borrows with its preemptor (never brought below the preemptor's share).
func (w *world) checkFairPreemption(plan Plan, before map[string]shareHold) {
	t := w.t
	started := map[string]bool{}
	lost := map[string]bool{} // a share's jobs requeued, finished or failed in this pass
	ids := slices.Clone(plan.Finished)
	for _, r := range plan.Requeued {
		ids = append(ids, r.Job)
	}
	for _, id := range ids {
		if x, ok := w.s.jobs[id]; ok && x.share != nil {
			lost[x.share.cfg.Name] = true
		} else {
			lost[""] = true // gone: whose share is unknown
		}
	}
	for _, f := range plan.Failed {
		if x, ok := w.s.jobs[f.Job]; ok && x.share != nil {
			lost[x.share.cfg.Name] = true
		} else {
			lost[""] = true
		}
	}
	startedGPUs := map[string]int{} // a share's starts in this pass, before or after the preemption
	for _, st := range plan.Starts {
		started[st.Share] = true
		if x, ok := w.s.jobs[st.Job]; ok && x.gpuN > 0 {
			startedGPUs[st.Share] += x.gpuN // a place=excl job counts its nodes' GPUs
			continue
		}
		for _, a := range st.Allocs {
			startedGPUs[st.Share] += len(a.GPUs)
		}
	}
	type victimOf struct {
		other bool   // a victim of another kind, or for another share
		by    string // the preemptor's share
		need  int    // the largest preemptor's GPUs
	}
	// GPUs nominated in this pass for each share's preemptors, with new
	// victims or on spare GPUs only (a share's earlier preemptor in the
	// pass counts against its quota too).
	nominated := map[string]int{}
	noms := w.nominatedJobs()
	for _, pr := range plan.Preempts {
		if j, ok := w.s.jobs[pr.For]; ok {
			noms[j] = true
		}
	}
	for j := range noms {
		if !w.nomsBefore[j] {
			nominated[j.share.cfg.Name] += j.charge()
		}
	}
	vs := map[string]*victimOf{}
	for _, pr := range plan.Preempts {
		v, ok := w.s.jobs[pr.Victim]
		if !ok {
			t.Fatalf("preempted %s unknown", pr.Victim)
		}
		x := vs[v.share.cfg.Name]
		if x == nil {
			x = &victimOf{}
			vs[v.share.cfg.Name] = x
		}
		if pr.Kind != FairShare {
			x.other = true
			continue
		}
		j, ok := w.s.jobs[pr.For]
		if !ok {
			t.Fatalf("fair preemptor %s unknown", pr.For)
		}
		if !w.s.cfg.FairShare || !w.s.cfg.FairPreemption {
			t.Fatalf("fair-share preemption of %s for %s with fair share %v, fair preemption %v\n%s", pr.Victim, pr.For, w.s.cfg.FairShare, w.s.cfg.FairPreemption, w.dump())
		}
		sh := j.share
		if sh.cfg.Strategy != LendAndBorrow || before[sh.cfg.Name].usage+startedGPUs[sh.cfg.Name]+nominated[sh.cfg.Name] <= sh.quota() {
			t.Fatalf("fair-share preemption for %s of share %s (%v, usage %d, quota %d): not a borrower\n%s", j.ID, sh.cfg.Name, sh.cfg.Strategy, before[sh.cfg.Name].usage, sh.quota(), w.dump())
		}
		if v.share == sh {
			t.Fatalf("fair-share preemption of %s for %s: same share\n%s", v.ID, j.ID, w.dump())
		}
		after := w.s.cfg.FairPreemptionAfter
		if j.waitedNow(w.now) < after || w.now.Sub(v.started) < after {
			t.Fatalf("fair-share preemption of %s (ran %v) for %s (waited %v): under %v\n%s", v.ID, w.now.Sub(v.started), j.ID, j.waitedNow(w.now), after, w.dump())
		}
		// A victim preempted before runs after doubled for each earlier
		// preemption, up to 6 times (issue 30 item 8b).
		ran := after
		for range min(v.Preemptions, 6) {
			ran *= 2
		}
		if w.now.Sub(v.started) < ran {
			t.Fatalf("fair-share preemption of %s, preempted %d times before, after %v of run: under %v\n%s", v.ID, v.Preemptions, w.now.Sub(v.started), ran, w.dump())
		}
		// The minimum fair gain (issue 30 item 7): the victim's share
		// borrowed per weight, before the pass, at least 2% of the
		// partition's usable GPUs (per the preemptor's weight) more than
		// the preemptor's share; within the pass the gap only narrows
		// when the victim's share started nothing and nominated no
		// preemptor (either counts in its borrowing when the core
		// decides, as a preemptor of its own earlier in the pass does)
		// and the preemptor's lost nothing (requeued, finished or
		// failed jobs).
		vsh := v.share
		gap := float64(sh.part.capUsable) / 50 / float64(sh.weight())
		if bv, bp := borrowedPerWeight(vsh, before[vsh.cfg.Name].eff), borrowedPerWeight(sh, before[sh.cfg.Name].usage); !started[vsh.cfg.Name] && nominated[vsh.cfg.Name] == 0 && !lost[sh.cfg.Name] && !lost[""] && bv < bp+gap {
			t.Fatalf("fair-share preemption of %s for %s: share %s borrowed %v per weight, %s %v, under the gap %v\n%s", v.ID, j.ID, vsh.cfg.Name, bv, sh.cfg.Name, bp, gap, w.dump())
		}
		if r := w.s.retries(v); v.Interactive || r != Unlimited && v.Preemptions+2 > r {
			t.Fatalf("fair-share preemption of %s: preemptions %d, retries %d\n%s", v.ID, v.Preemptions, r, w.dump())
		}
		if x.by != "" && x.by != sh.cfg.Name {
			x.other = true
		}
		x.by, x.need = sh.cfg.Name, max(x.need, j.total())
	}
	for name, x := range vs {
		if x.other || x.by == "" || started[name] {
			continue
		}
		vsh, psh := w.s.shareByName[name], w.s.shareByName[x.by]
		if vsh.eff() < vsh.quota() {
			t.Fatalf("fair-share preemption left share %s at %d GPUs, quota %d (it was %d)\n%s", name, vsh.eff(), vsh.quota(), before[name].eff, w.dump())
		}
		final := borrowedPerWeight(psh, before[x.by].usage+x.need)
		if got := borrowedPerWeight(vsh, vsh.eff()); got < final {
			t.Fatalf("fair-share preemption left share %s borrowing %v per weight, below %s's %v\n%s", name, got, x.by, final, w.dump())
		}
	}
}
