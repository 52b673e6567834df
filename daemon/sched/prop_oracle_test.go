package sched

import (
	"flag"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The property tests' coverage and oracle: what the generator produced
// (so that a generator that stops producing an event kind or a
// configuration knob fails the test), and the invariants derived from the
// documentation (README, doc.go, the types' comments) that are checked
// against the core after every pass, with the world's own record of what
// happened (outcomes, holds, begin times, dependencies).

// coverage counts what the generator produced in one property test.
type coverage struct {
	mu sync.Mutex
	n  map[string]int
}

func newCoverage() *coverage { return &coverage{n: map[string]int{}} }

func (c *coverage) add(kind string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.n[kind]++
	c.mu.Unlock()
}

// propChecks is rapid's -rapid.checks (100 unless set).
func propChecks() int {
	if f := flag.Lookup("rapid.checks"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if n, ok := g.Get().(int); ok {
				return n
			}
		}
	}
	return 100
}

// eventKinds are the events (accepted) every world with node events
// produces; worldKinds what every world produces, node events or not.
var (
	worldKinds = []string{
		"Submitted", "Cancelled", "Exited", "Requeued", "StartFailed", "PriorityChanged", "HoldChanged",
		"JobAltered", "ConfigReplaced", "DependencyOutcome", "Adopted", "UsageRestored", "NodeUp",
		// Refused events of each kind the generator aims to be refused.
		"refused Submitted", "refused Cancelled", "refused Exited", "refused Requeued", "refused StartFailed",
		"refused PriorityChanged", "refused HoldChanged", "refused JobAltered", "refused ConfigReplaced",
		"refused DependencyOutcome", "refused NodeUp", "refused Adopted", "Forgotten", "refused Forgotten", "Moved", "refused Moved", "Swapped", "refused Swapped",
		// Knobs of jobs.
		"job multi-node", "job exclusive", "job array", "job array max", "job labels", "job labels unmatched",
		"job hold", "job begin", "job walltime", "job interactive",
		"dep afterok", "dep afternotok", "dep afterany", "dep after", "dep on array", "dep on subjob", "dep on outcome",
		"dep never met",
		"hold user", "hold admin", "hold system", "release",
		"alter begin", "alter deps", "alter walltime", "cancel subjob index",
		"startfail refused", "startfail retry", "restart",
		// Knobs of the configuration, first or reloaded.
		"strategy RESERVE", "strategy LEND", "strategy LEND_AND_BORROW", "borrow unlimited", "borrow limited",
		"inshare", "fair share", "no fair share", "fair users", "fair preemption", "fair search cut short", "backfill", "no backfill",
		"default walltime", "user job limit", "user gpu limit", "node labels", "start retries", "checkpoints local",
		"reload quota", "reload strategy", "reload share removed", "reload share added", "reload node removed",
		"reload node added", "reload node gpus", "reload node labels", "reload partition added", "reload backfill",
		// Outcomes seen in plans (which kinds of preemption, and which
		// dependency types were met at a start, are counted too but vary
		// too much from run to run to be required).
		"plan start", "plan preempt", "plan requeued", "plan finished", "plan failed",
	}
	nodeKinds = []string{
		"NodeDown", "NodeDrained", "NodeResumed", "refused NodeDown", "node gpus changed", "job cpus", "job mem", "job no gpus",
		"node cpus",
	}
)

// propCheck runs a property with a fresh coverage and, when it passed with
// at least rapid's default number of checks, asserts that every kind in
// want was produced. Rare kinds miss a run of 100 worlds now and then (a
// few runs in a hundred, from rapid's random seed): while some are
// missing the property runs again, up to coverageRounds times in all, so
// that only a generator that really stopped producing a kind fails.
func propCheck(t *testing.T, want []string, prop func(*rapid.T, *coverage)) {
	t.Helper()
	const coverageRounds = 4
	cov := newCoverage()
	var missing []string
	for round := 0; round < coverageRounds; round++ {
		rapid.Check(t, func(rt *rapid.T) { prop(rt, cov) })
		if t.Failed() || propChecks() < 100 {
			return
		}
		missing = missing[:0]
		for _, k := range want {
			if cov.n[k] == 0 {
				missing = append(missing, k)
			}
		}
		if len(missing) == 0 {
			return
		}
	}
	t.Errorf("the generator never produced, in %d runs: %s", coverageRounds, strings.Join(missing, "; "))
}

// endRec is how a job that left the core ended, as the world saw it (from
// its own events and the plans), or as a DependencyOutcome said.
type endRec struct {
	array                        bool
	started, ok, failed, dropped bool
}

// oracle is the world's own record, independent of the core's state.
type oracle struct {
	ended     map[JobID]endRec
	started   map[JobID]bool // ever started (an array: some subjob did)
	cancelled map[JobID]bool // a Cancelled was accepted for it (or its array)
	lastExit  map[JobID]int
	deps      map[JobID][]Dep
	hold      map[JobID]Hold // user and admin bits set by events
	notBefore map[JobID]time.Time
	arrayIdx  map[JobID][]int // an array's indices as submitted
	outcomes  []JobID         // ids only DependencyOutcome told of
	restarted bool
}

func newOracle() oracle {
	return oracle{ended: map[JobID]endRec{}, started: map[JobID]bool{}, cancelled: map[JobID]bool{},
		lastExit: map[JobID]int{}, deps: map[JobID][]Dep{}, hold: map[JobID]Hold{}, notBefore: map[JobID]time.Time{},
		arrayIdx: map[JobID][]int{}}
}

// accepted records an event the core accepted; before is the core as it
// was.
func (w *world) accepted(ev Event, before coreView) {
	o := &w.o
	switch e := ev.(type) {
	case Submitted:
		o.deps[e.Job.ID] = slices.Clone(e.Job.Deps)
		o.hold[e.Job.ID] = e.Job.Hold &^ HoldSystem
		o.notBefore[e.Job.ID] = e.Job.NotBefore
		if a := e.Job.Array; a != nil {
			o.arrayIdx[e.Job.ID] = slices.Clone(a.Indices)
		}
	case JobAltered:
		o.deps[e.ID] = slices.Clone(e.Deps)
		o.notBefore[e.ID] = e.NotBefore
	case HoldChanged:
		switch {
		case !e.Set:
			w.cov.add("release")
		case e.Bit&HoldSystem != 0:
			w.cov.add("hold system")
		case e.Bit&HoldAdmin != 0:
			w.cov.add("hold admin")
		default:
			w.cov.add("hold user")
		}
		if _, ok := o.hold[e.ID]; ok {
			if e.Set {
				o.hold[e.ID] |= e.Bit &^ HoldSystem
			} else {
				o.hold[e.ID] &^= e.Bit
			}
		}
	case Cancelled:
		o.cancelled[e.ID] = true
		if info, ok := before.jobs[e.ID]; ok && info.Job.Array != nil {
			// Its subjobs in the core, running or waiting again, go
			// with it; those that ended before keep their outcome.
			for id := range before.jobs {
				if pid, _, sub := splitSubID(id); sub && pid == e.ID {
					o.cancelled[id] = true
				}
			}
			w.dropIndices(e.ID) // the indices that never started, never will
		} else if pid, _, sub := splitSubID(e.ID); sub && !o.started[e.ID] {
			if _, held := w.s.jobs[e.ID]; !held && w.s.jobs[pid] != nil {
				o.ended[e.ID] = endRec{dropped: true} // qdel of an index that never started
			}
		}
	case Exited:
		o.lastExit[e.ID] = e.ExitStatus
	case Requeued, StartFailed:
		o.lastExit[jobOf(ev)] = 0
	case DependencyOutcome:
		o.ended[e.ID] = endRec{array: isArrayID(e.ID), started: e.Started, ok: e.Started && !e.Cancelled && !e.Failed && e.ExitStatus == 0, failed: e.Failed}
		o.outcomes = append(o.outcomes, e.ID)
	}
}

// eventKind names an event's type ("Submitted").
func eventKind(ev Event) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", ev), "sched.")
}

func jobOf(ev Event) JobID {
	switch e := ev.(type) {
	case Requeued:
		return e.ID
	case StartFailed:
		return e.ID
	}
	return ""
}

// observe records a plan's outcomes in the oracle: starts first (a job
// may start and fail in one plan only in that order), then ends.
func (w *world) observe(p Plan) {
	o := &w.o
	for _, st := range p.Starts {
		o.started[st.Job] = true
		if st.Array != "" {
			o.started[st.Array] = true
			if o.cancelled[st.Array] {
				w.t.Fatalf("subjob %s of cancelled array %s started\n%s", st.Job, st.Array, w.dump())
			}
		}
	}
	for _, f := range p.Failed {
		w.ended(f.Job, true)
	}
	for _, id := range p.Finished {
		w.ended(id, false)
	}
}

// dropIndices records an array's indices that never started as ended
// without a start (the array was cancelled, failed or finished).
func (w *world) dropIndices(arr JobID) {
	o := &w.o
	for _, idx := range o.arrayIdx[arr] {
		sub := subID(arr, idx)
		if _, ended := o.ended[sub]; !ended && !o.started[sub] {
			o.ended[sub] = endRec{dropped: true}
		}
	}
}

func (w *world) ended(id JobID, failed bool) {
	o := &w.o
	if isArrayID(id) {
		defer w.dropIndices(id)
	}
	if r, dup := o.ended[id]; dup && !r.dropped {
		w.t.Fatalf("job %s ended twice\n%s", id, w.dump())
	}
	r := endRec{array: isArrayID(id), started: o.started[id], failed: failed}
	r.ok = r.started && !failed && !o.cancelled[id] && o.lastExit[id] == 0
	o.ended[id] = r
}

// depMet says whether d is met by what the world saw: yes, no (not yet),
// or maybe where the world's record is not exact (arrays: %max, dropped
// indices; "after" across a restart, where a requeued job comes back as
// one that never ran).
type tri uint8

const (
	no tri = iota
	yes
	maybe
)

func (w *world) depMet(d Dep) tri {
	o := &w.o
	r, ended := o.ended[d.On]
	arr := isArrayID(d.On)
	switch d.Type {
	case AfterAny:
		if ended {
			return yes
		}
	case AfterOK, AfterNotOK:
		if ended && arr {
			return maybe
		}
		if ended && r.ok == (d.Type == AfterOK) {
			return yes
		}
	case After:
		if ended && r.started || o.started[d.On] && !arr {
			if o.restarted {
				return maybe
			}
			return yes
		}
		if arr && o.started[d.On] {
			return maybe
		}
	}
	return no
}

// depNever says whether d can never be met by what the world saw.
func (w *world) depNever(d Dep) bool {
	r, ended := w.o.ended[d.On]
	if !ended || r.array {
		return false
	}
	switch d.Type {
	case AfterOK:
		return !r.ok
	case AfterNotOK:
		return r.ok
	case After:
		return !r.started
	}
	return false
}

// pendingEntry is a pending entry as it stood before a pass.
type pendingEntry struct {
	job    Job
	reason Reason
}

// pendingBefore returns the core's pending entries before a pass.
func (w *world) pendingBefore() map[JobID]pendingEntry {
	m := map[JobID]pendingEntry{}
	for id, j := range w.s.jobs {
		if j.state == Pending && !j.gone {
			m[id] = pendingEntry{job: cloneJob(j.Job), reason: j.reason}
		}
	}
	return m
}

// checkStarts asserts what every start of a plan honours: the entry was
// pending, not held, its begin time had come, its dependencies were met (as
// the world saw it), its share is in the configuration, and its GPUs are
// on nodes of its share's partition that were up, not drained, with the
// labels it selects.
func (w *world) checkStarts(p Plan, pre map[JobID]pendingEntry, nodesBefore map[string]NodeInfo) {
	t := w.t
	for _, st := range p.Starts {
		id := st.Job
		if _, requeued := pre[id]; !requeued && st.Array != "" {
			id = st.Array // a new subjob of a pending array
		}
		e, ok := pre[id]
		if !ok {
			t.Fatalf("start %s: %s was not pending\n%s", st.Job, id, w.dump())
		}
		if e.job.Hold != 0 {
			t.Fatalf("start %s: held (%v)\n%s", st.Job, e.job.Hold, w.dump())
		}
		if e.job.NotBefore.After(w.now) {
			t.Fatalf("start %s at %v: begin time %v\n%s", st.Job, w.now, e.job.NotBefore, w.dump())
		}
		for _, d := range e.job.Deps {
			if w.depMet(d) == no {
				t.Fatalf("start %s: dependency %v:%s not met (%+v)\n%s", st.Job, d.Type, d.On, w.o.ended[d.On], w.dump())
			}
			w.cov.add("dep met " + d.Type.String())
		}
		w.checkTopoStart(st, e.job)
		sc, ok := w.shareCfgOK(st.Share)
		if !ok || st.Share != e.job.Share {
			t.Fatalf("start %s in share %s (job's %s), not in the configuration\n%s", st.Job, st.Share, e.job.Share, w.dump())
		}
		for _, a := range st.Allocs {
			nc, ok := w.nodeCfg(a.Node)
			n := nodesBefore[a.Node]
			if !ok || nc.Partition != sc.Partition || !n.Up || n.Drained {
				t.Fatalf("start %s on %s: in the configuration %v, partition %s (share's %s), up %v, drained %v\n%s",
					st.Job, a.Node, ok, nc.Partition, sc.Partition, n.Up, n.Drained, w.dump())
			}
			for k, v := range e.job.Labels {
				if nc.Labels[k] != v {
					t.Fatalf("start %s on %s: label %s=%s, node has %q\n%s", st.Job, a.Node, k, v, nc.Labels[k], w.dump())
				}
			}
			for _, g := range a.GPUs {
				if g < 0 || g >= n.GPUs {
					t.Fatalf("start %s: GPU %d of %s, which has %d\n%s", st.Job, g, a.Node, n.GPUs, w.dump())
				}
			}
			// What the job counts must have been free (every job counts a
			// CPU on a node that accounts them; memory only if it asks).
			if nd := w.s.nodeByName[a.Node]; nd.cpus > 0 && nd.usedCPU > nd.cpus || e.job.MemPerNode > 0 && nd.mem > 0 && nd.usedMem > nd.mem {
				t.Fatalf("start %s on %s: its jobs hold %d CPUs and %d bytes; it has %d and %d\n%s", st.Job, a.Node, nd.usedCPU, nd.usedMem, nd.cpus, nd.mem, w.dump())
			}
		}
	}
	for _, f := range p.Failed {
		if f.Reason != ReasonDependencyNeverMet {
			continue
		}
		never := false
		for _, d := range w.o.deps[f.Job] {
			if w.depNever(d) || isArrayID(d.On) || w.o.restarted {
				never = true
			}
		}
		if _, sub := w.o.deps[f.Job]; !sub && strings.Contains(string(f.Job), "[") {
			never = true // a preempted subjob: its array's dependencies
		}
		w.cov.add("dep never met")
		if !never {
			t.Fatalf("job %s failed with %v, but its dependencies %v can still be met\n%s", f.Job, f.Reason, w.o.deps[f.Job], w.dump())
		}
	}
}

// checkWorld asserts, after a pass, what holds of every job the core
// holds: array %max, holds and begin times as the events set them, the
// pending reasons' meaning, and NextWake.
func (w *world) checkWorld() {
	t := w.t
	ids := w.s.sortedIDs()
	wake, wakeOK := w.s.NextWake()
	nodes := map[string]NodeInfo{}
	for _, n := range w.s.Nodes() {
		nodes[n.Name] = n
	}
	usage := map[string]ShareUsage{}
	for _, u := range w.s.Shares() {
		usage[u.Share] = u
	}
	w.checkCharged(ids, nodes)
	for _, id := range ids {
		info, _ := w.s.Job(id)
		j := info.Job
		if a := j.Array; a != nil && a.MaxRunning > 0 && len(info.Running) > a.MaxRunning {
			t.Fatalf("array %s runs %v, %%max %d\n%s", id, info.Running, a.MaxRunning, w.dump())
		}
		if h, ok := w.o.hold[id]; ok && info.State == Pending && j.Hold&^HoldSystem != h {
			t.Fatalf("job %s: hold %v, events set %v\n%s", id, j.Hold, h, w.dump())
		}
		if nb, ok := w.o.notBefore[id]; ok && !nb.Equal(j.NotBefore) {
			t.Fatalf("job %s: begin %v, events set %v", id, j.NotBefore, nb)
		}
		if info.State != Pending {
			continue
		}
		if j.NotBefore.After(w.now) && (!wakeOK || wake.After(j.NotBefore)) {
			t.Fatalf("job %s begins at %v; NextWake %v %v (late)\n%s", id, j.NotBefore, wake, wakeOK, w.dump())
		}
		w.checkReason(id, info, nodes, usage)
	}
}

// checkCharged asserts that every GPU kept from other jobs is charged to
// a share (issue 30 item 1: a share's quota is always recoverable): the
// GPUs jobs hold plus those a place=excl job keeps idle on its nodes (all
// of a node's GPUs when it started there) are at most what the shares
// count as in use. (More is charged only where a restart adopted jobs
// beside an exclusive one.)
func (w *world) checkCharged(ids []JobID, nodes map[string]NodeInfo) {
	kept := map[string]gpuSet{}
	for _, n := range nodes {
		kept[n.Name] = setOf(n.UsedGPUs)
	}
	for _, id := range ids {
		info, _ := w.s.Job(id)
		if info.State == Pending || !info.Job.Exclusive {
			continue
		}
		for i, a := range info.Allocs {
			kept[a.Node] = kept[a.Node].or(w.s.jobs[id].keeps(i))
		}
	}
	k, charged := 0, 0
	for _, g := range kept {
		k += g.count()
	}
	for _, sh := range w.s.shares {
		charged += sh.inUse()
	}
	if charged < k {
		w.t.Fatalf("jobs keep %d GPUs from others, the shares are charged %d\n%s", k, charged, w.dump())
	}
}

// checkReason asserts that a pending job's reason means what the Reason
// constants say it means.
func (w *world) checkReason(id JobID, info JobInfo, nodes map[string]NodeInfo, usage map[string]ShareUsage) {
	t := w.t
	j := info.Job
	sc, inCfg := w.shareCfgOK(j.Share)
	// Why it may not be considered at all, as the world knows it.
	var why []Reason
	if !inCfg {
		why = append(why, ReasonShareRemoved)
	}
	if j.Hold != 0 {
		why = append(why, ReasonHeld)
		if j.Hold&HoldSystem != 0 {
			why = append(why, ReasonNeverFits, ReasonQuotaLimit, ReasonTopologyNoDomain)
		}
	}
	depWait := false
	for _, d := range j.Deps {
		switch w.depMet(d) {
		case no:
			why = append(why, ReasonDependency)
		case maybe:
			depWait = true
		}
	}
	if j.NotBefore.After(w.now) {
		why = append(why, ReasonBeginTime)
	}
	r := info.Reason
	bad := func(format string, a ...any) {
		t.Fatalf("job %s pending with %v: %s\n%s", id, r, fmt.Sprintf(format, a...), w.dump())
	}
	if len(why) > 0 {
		if !slices.Contains(why, r) && !(depWait && r == ReasonDependency) {
			bad("it waits for %v", why)
		}
	}
	g := j.GPUCount()
	if j.Exclusive {
		// Charged every GPU of its nodes: the partition's largest node
		// for each (exclusive.go).
		most := 0
		for _, nc := range w.cfg.Nodes {
			if nc.Partition == sc.Partition {
				most = max(most, nodes[nc.Name].GPUs)
			}
		}
		g = j.Nodes * max(j.GPUsPerNode, most)
	}
	u := usage[j.Share]
	// What the share's own quota and borrow checks count: its running jobs,
	// those being preempted until they exit, and its nominations
	// (share.usage, which consistent() recounts from the jobs).
	u.InUse = w.s.shareByName[j.Share].usage()
	switch r {
	case ReasonNone:
		bad("no reason")
	case ReasonShareRemoved, ReasonHeld, ReasonBeginTime:
		if !slices.Contains(why, r) {
			bad("it waits for %v", why)
		}
	case ReasonDependency:
		if !slices.Contains(why, r) && !depWait {
			bad("its dependencies %v are met", j.Deps)
		}
	case ReasonNeverFits:
		if j.Hold&HoldSystem == 0 {
			bad("no system hold")
		}
		if j.CPUsPerNode <= 1 && j.MemPerNode == 0 {
			fit := 0
			for _, nc := range w.cfg.Nodes {
				if nc.Partition != sc.Partition {
					continue
				}
				ok := nodes[nc.Name].GPUs >= j.GPUsPerNode
				for k, v := range j.Labels {
					ok = ok && nc.Labels[k] == v
				}
				if ok {
					fit++
				}
			}
			if fit >= j.Nodes {
				bad("%d nodes of its partition hold %d GPUs (and its labels %v), it asks %d", fit, j.GPUsPerNode, j.Labels, j.Nodes)
			}
		}
	case ReasonQuotaLimit:
		if j.Hold&HoldSystem == 0 {
			bad("no system hold")
		}
		if reach := w.reach(sc, nodes); g <= reach {
			bad("%d GPUs, its share can hold %d", g, reach)
		}
	case ReasonQuota:
		if inCfg && u.InUse+g <= u.Quota {
			bad("share %s holds %d of %d, the job asks %d", j.Share, u.InUse, u.Quota, g)
		}
	case ReasonBorrowLimit:
		if sc.Strategy != LendAndBorrow || sc.BorrowLimit < 0 || u.InUse+g <= u.Quota+u.Quota*sc.BorrowLimit/100 {
			bad("share %s (%v, limit %d%%) holds %d of %d, the job asks %d", j.Share, sc.Strategy, sc.BorrowLimit, u.InUse, u.Quota, g)
		}
	case ReasonFairShare:
		if !w.s.cfg.FairShare || u.InUse+g <= u.Quota {
			bad("fair share %v; share %s holds %d of %d, the job asks %d", w.s.cfg.FairShare, j.Share, u.InUse, u.Quota, g)
		}
	case ReasonArrayLimit:
		a := w.arrayOfInfo(id, info)
		if a == nil || a.Job.Array.MaxRunning == 0 || len(a.Running) < a.Job.Array.MaxRunning {
			bad("its array does not run its %%max")
		}
	case ReasonUserJobLimit, ReasonUserGPULimit:
		// What the user holds and has nominated in the share (the
		// counters consistent() recounts from the jobs).
		var n, gpus int
		if x := w.s.shareByName[j.Share].users[j.User]; x != nil {
			n, gpus = x.jobs+x.nomJobs, x.gpus+x.nomGPUs
		}
		if r == ReasonUserJobLimit && (sc.MaxRunningJobsPerUser == 0 || n < sc.MaxRunningJobsPerUser) ||
			r == ReasonUserGPULimit && (sc.MaxGPUsPerUser == 0 || gpus+g <= sc.MaxGPUsPerUser) {
			bad("its user holds %d jobs and %d GPUs (limits %d, %d)", n, gpus, sc.MaxRunningJobsPerUser, sc.MaxGPUsPerUser)
		}
	case ReasonBackfillWouldDelay:
		if !w.s.cfg.Backfill {
			bad("backfill is off")
		}
	case ReasonNodesDown:
		for _, nc := range w.cfg.Nodes {
			if n := nodes[nc.Name]; nc.Partition == sc.Partition && n.Up && !n.Drained {
				bad("node %s of its partition is usable", nc.Name)
			}
		}
	case ReasonNoIdleNodes:
		if !j.Exclusive {
			bad("not place=excl")
		}
	case ReasonCPUs, ReasonMemory:
		if r == ReasonCPUs && !w.cpus || r == ReasonMemory && (j.MemPerNode == 0 || !w.cpus) {
			bad("it asks %d CPUs and %d bytes", j.CPUsPerNode, j.MemPerNode)
		}
	case ReasonPreempting, ReasonReclaimingForFit:
		if w.s.jobs[id].nom == nil {
			bad("no nomination")
		}
	case ReasonTopologyNoDomain, ReasonTopologyWaiting:
		w.checkTopoReason(j, r, sc, nodes, bad)
	}
}

// reach is the most GPUs a share can ever hold (ReasonQuotaLimit): its
// quota plus its borrow limit; with no limit, the partition's GPUs but the
// RESERVE quotas, or its quota if that is more; never more than its
// max_gpus_per_user.
func (w *world) reach(sc Share, nodes map[string]NodeInfo) int {
	r := w.shareReach(sc, nodes)
	if sc.MaxGPUsPerUser > 0 {
		r = min(r, sc.MaxGPUsPerUser) // no user may hold more (issue 30 item 8)
	}
	return r
}

// shareReach is reach but for the per-user limit.
func (w *world) shareReach(sc Share, nodes map[string]NodeInfo) int {
	switch {
	case sc.Strategy != LendAndBorrow:
		return sc.GPUs
	case sc.BorrowLimit >= 0:
		return sc.GPUs + sc.GPUs*sc.BorrowLimit/100
	}
	all, reserve := 0, 0
	for _, nc := range w.cfg.Nodes {
		if nc.Partition == sc.Partition {
			all += nodes[nc.Name].GPUs
		}
	}
	for _, x := range w.cfg.Shares {
		if x.Partition == sc.Partition && x.Strategy == Reserve {
			reserve += x.GPUs
		}
	}
	return max(sc.GPUs, all-reserve)
}

// arrayOfInfo returns the array a pending entry counts against.
func (w *world) arrayOfInfo(id JobID, info JobInfo) *JobInfo {
	if info.Job.Array != nil {
		return &info
	}
	if pid, _, ok := splitSubID(id); ok {
		if a, ok := w.s.Job(pid); ok && a.Job.Array != nil {
			return &a
		}
	}
	return nil
}

// coreView is everything a driver can see of the core, to compare the
// state before and after a refused event.
type coreView struct {
	jobs   map[JobID]JobInfo
	shares []ShareUsage
	nodes  []NodeInfo
	plan   Plan
	wake   time.Time
	wakeOK bool
}

func (s *Scheduler) view() coreView {
	v := coreView{jobs: map[JobID]JobInfo{}, shares: s.Shares(), nodes: s.Nodes()}
	for id := range s.jobs {
		v.jobs[id], _ = s.Job(id)
	}
	v.plan = clonePlan(s.plan)
	v.wake, v.wakeOK = s.NextWake()
	return v
}

func clonePlan(p Plan) Plan {
	q := p
	q.Starts = slices.Clone(p.Starts)
	q.Preempts = slices.Clone(p.Preempts)
	q.Requeued = slices.Clone(p.Requeued)
	q.Finished = slices.Clone(p.Finished)
	q.Failed = slices.Clone(p.Failed)
	q.Pending = slices.Clone(p.Pending)
	return q
}

// diffView names the first difference between two views.
func diffView(a, b coreView) string {
	if !reflect.DeepEqual(a.jobs, b.jobs) {
		var ids []string
		for id := range a.jobs {
			ids = append(ids, string(id))
		}
		for id := range b.jobs {
			if _, ok := a.jobs[id]; !ok {
				ids = append(ids, string(id))
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			if x, y := a.jobs[JobID(id)], b.jobs[JobID(id)]; !reflect.DeepEqual(x, y) {
				return fmt.Sprintf("job %s: %+v -> %+v", id, x, y)
			}
		}
	}
	switch {
	case !reflect.DeepEqual(a.shares, b.shares):
		return fmt.Sprintf("shares %+v -> %+v", a.shares, b.shares)
	case !reflect.DeepEqual(a.nodes, b.nodes):
		return fmt.Sprintf("nodes %+v -> %+v", a.nodes, b.nodes)
	case !reflect.DeepEqual(a.plan, b.plan):
		return fmt.Sprintf("plan %+v -> %+v", a.plan, b.plan)
	case a.wake != b.wake || a.wakeOK != b.wakeOK:
		return fmt.Sprintf("NextWake %v %v -> %v %v", a.wake, a.wakeOK, b.wake, b.wakeOK)
	}
	return ""
}

func (w *world) shareCfgOK(name string) (Share, bool) {
	for _, s := range w.cfg.Shares {
		if s.Name == name {
			return s, true
		}
	}
	return Share{}, false
}

func (w *world) nodeCfg(name string) (Node, bool) {
	for _, n := range w.cfg.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}
