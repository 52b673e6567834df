package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Epoch is the wall-clock time the core sees for the trace's time 0.
var Epoch = time.Unix(0, 0).UTC()

// ExitPreempted is the exit status reported for a preempted job: killed by
// SIGTERM, in PBS's 256+signal form.
const ExitPreempted = 256 + 15

// ErrCore wraps an inconsistency between the core's plan and the
// simulator's view (a bug in one of them).
var ErrCore = errors.New("core plan inconsistent")

// Options tune a run.
type Options struct {
	// Events, when set, receives the event log (one Record per line).
	Events io.Writer
	// Usage keeps the GPUs-in-use series per share (for SavePlot).
	Usage bool
	// Progress, when set, is called with the number of jobs that have
	// ended (finished or failed), at most every ProgressEvery jobs.
	Progress func(ended int)
	// Actions are applied at their times (see DecodeActions); Run checks
	// them with ValidateActions.
	Actions []Action
}

// ProgressEvery is how many job ends pass between Progress calls.
const ProgressEvery = 500

type jobPhase uint8

const (
	phaseUnsubmitted jobPhase = iota
	phasePending
	phaseRunning
	phasePreempting
	phaseKilling // cancelled while running: it exits after its grace time
	phaseExiting // its finish exit was applied; the core reports it Finished
	phaseFinished
	phaseFailed
)

// simJob is the simulator's record of one trace job.
type simJob struct {
	tj        *TraceJob
	id        sched.JobID
	share     int           // index in the cluster's shares
	seq       uint64        // rank in submission order (time, then line), from 1
	gpus      int           // total
	grace     time.Duration // its run's grace, as the core resolved it (Start.Grace)
	phase     jobPhase
	gen       uint32        // run generation: stale finish events carry an older one
	remaining time.Duration // work still to do
	runStart  time.Duration
	started   bool
	cancelled bool          // a cancel action reached it
	firstWait time.Duration // first submit to first start
	queued    time.Duration // total pending time, requeues included
	since     time.Duration // pending since
	end       time.Duration // when it finished (phaseFinished)
}

// runner is one simulation in progress.
type runner struct {
	cl       *Cluster
	core     *sched.Scheduler
	jobs     []simJob
	byID     map[sched.JobID]int32
	q        eventQueue
	out      *recordWriter
	opt      Options
	res      *Result
	shareIdx map[string]int

	now    time.Duration
	last   time.Duration // time of the previous pass
	inUse  []int         // per share, after the previous pass
	borrow []int
	lent   []int
	// pending counts each share's pending jobs; wanting says, after the
	// previous pass, which LEND_AND_BORROW shares have pending jobs while
	// at or over their quota (each start would borrow) and below their
	// borrow limit.
	pending []int
	wanting []bool
	fair    fairWindows
	// pendSizes counts each share's pending jobs by their GPUs; wantFit is
	// wanting where the share's smallest pending job also fits under its
	// borrow limit (fairFit measures over those shares).
	pendSizes []map[int]int
	wantFit   []bool
	fairFit   fairWindows
	wakeAt    time.Duration // the wake-up event queued (-1: none)
	// held says whether what the shares hold may have changed since the
	// last snapshot (anything but submits and wake-ups applied, or a plan
	// that started, preempted or removed jobs): a snapshot reads the
	// core's Shares only then.
	held  bool
	ended int
	rec   Record
	meter *topoMeter // with a topology (Result.Topology)
}

// Run replays jobs on the cluster through the scheduling core and returns
// the result. It fails on a share the cluster lacks (a *TraceError), on an
// error from the core, or when ctx is cancelled.
func Run(ctx context.Context, cl Cluster, jobs []TraceJob, opt Options) (*Result, error) {
	if len(jobs) == 0 {
		return nil, ErrEmptyTrace
	}
	if err := ValidateTrace(&cl, jobs); err != nil {
		return nil, err
	}
	if err := ValidateActions(&cl, jobs, opt.Actions); err != nil {
		return nil, err
	}
	core, err := sched.New(cl.coreConfig())
	if err != nil {
		return nil, fmt.Errorf("sim: core: %w", err)
	}
	r := &runner{
		cl:       &cl,
		core:     core,
		jobs:     make([]simJob, len(jobs)),
		byID:     make(map[sched.JobID]int32, len(jobs)),
		out:      newRecordWriter(opt.Events),
		opt:      opt,
		shareIdx: make(map[string]int),
		held:     true,
	}
	n := len(cl.Sched.Shares)
	r.inUse, r.borrow, r.lent = make([]int, n), make([]int, n), make([]int, n)
	r.pending, r.wanting = make([]int, n), make([]bool, n)
	r.pendSizes, r.wantFit = make([]map[int]int, n), make([]bool, n)
	for i := range r.pendSizes {
		r.pendSizes[i] = map[int]int{}
	}
	for i, s := range cl.Sched.Shares {
		r.shareIdx[s.Name] = i
	}
	r.res = newResult(&cl, jobs, opt.Usage)
	if r.res.Topology {
		r.meter = newTopoMeter(&cl.Sched)
	}
	r.fair = newFairWindows(FairnessWindow, r.res.Shares)
	r.fairFit = newFairWindows(FairnessWindow, r.res.Shares)
	r.wakeAt = -1

	order := make([]int32, len(jobs))
	for i := range jobs {
		tj := &jobs[i]
		si := r.shareIdx[tj.Share]
		r.jobs[i] = simJob{tj: tj, id: sched.JobID(tj.ID), share: si, gpus: tj.TotalGPUs(), remaining: tj.Duration}
		if _, dup := r.byID[r.jobs[i].id]; dup {
			return nil, fmt.Errorf("sim: job %s: %w", tj.ID, ErrDuplicateJob)
		}
		r.byID[r.jobs[i].id] = int32(i)
		order[i] = int32(i)
		r.res.Shares[si].Jobs++
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		ja, jb := r.jobs[a].tj, r.jobs[b].tj
		if c := cmp.Compare(ja.Submit, jb.Submit); c != 0 {
			return c
		}
		return cmp.Compare(ja.Line, jb.Line)
	})
	r.q.h = make([]event, 0, len(jobs))
	for rank, i := range order {
		// The core's submission order is the order of submission times,
		// as job numbers are, whatever order the rows come in.
		r.jobs[i].seq = uint64(rank + 1)
		r.q.push(event{t: r.jobs[i].tj.Submit, kind: evSubmit, job: i})
	}
	for i := range opt.Actions {
		r.q.push(event{t: opt.Actions[i].At, kind: evAction, job: int32(i)})
	}
	r.res.Start = r.jobs[order[0]].tj.Submit
	r.last = r.res.Start

	for _, nd := range cl.Sched.Nodes {
		if err := core.Apply(sched.NodeUp{Node: nd.Name}); err != nil {
			return nil, fmt.Errorf("sim: node %s up: %w", nd.Name, err)
		}
	}
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	if err := r.out.flush(); err != nil {
		return nil, fmt.Errorf("sim: event log: %w", err)
	}
	r.finish()
	return r.res, nil
}

func (r *runner) loop(ctx context.Context) error {
	for passes := 0; r.q.Len() > 0; {
		t := r.q.peek().t
		applied := 0
		for r.q.Len() > 0 && r.q.peek().t == t {
			e := r.q.pop()
			if applied == 0 && !r.stale(&e) {
				// The state was constant since the previous pass.
				r.integrate(t)
				r.now = t
			}
			ok, err := r.apply(&e)
			if err != nil {
				return err
			}
			if ok {
				applied++
			}
		}
		if applied == 0 {
			continue
		}
		plan := r.core.Schedule(Epoch.Add(t))
		if len(plan.Starts)+len(plan.Preempts)+len(plan.Requeued)+len(plan.Finished)+len(plan.Failed) > 0 {
			r.held = true
		}
		if err := r.carryOut(&plan); err != nil {
			return err
		}
		r.snapshot()
		r.wake(t)
		passes++
		r.res.Passes = passes
		if passes%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// stale reports whether e belongs to a run that has since ended.
func (r *runner) stale(e *event) bool {
	if e.kind == evAction {
		return false
	}
	if e.kind == evWake {
		return e.t != r.wakeAt // a later wake-up replaced it
	}
	j := &r.jobs[e.job]
	switch e.kind {
	case evFinish:
		return j.phase != phaseRunning || j.gen != e.gen
	case evExit:
		return j.phase != phasePreempting || j.gen != e.gen
	case evKill:
		return j.phase != phaseKilling || j.gen != e.gen
	}
	return false
}

// apply feeds one due event to the core; it reports false for a stale one.
func (r *runner) apply(e *event) (bool, error) {
	if r.stale(e) {
		return false, nil
	}
	if e.kind == evAction {
		r.held = true
		return true, r.action(&r.opt.Actions[e.job])
	}
	if e.kind == evWake {
		r.wakeAt = -1
		return true, nil
	}
	if e.kind != evSubmit {
		r.held = true // an exit
	}
	j := &r.jobs[e.job]
	switch e.kind {
	case evSubmit:
		tj := j.tj
		err := r.core.Apply(sched.Submitted{Job: sched.Job{
			ID:          j.id,
			Share:       tj.Share,
			Priority:    tj.Priority,
			Seq:         j.seq,
			Submit:      Epoch.Add(tj.Submit),
			Nodes:       tj.Nodes,
			GPUsPerNode: tj.GPUs,
			Walltime:    tj.Walltime,
			Grace:       tj.Grace, // negative: the partition's (sched.DefaultGrace)
			Topology:    r.cl.topologyRequest(tj),
		}})
		if err != nil {
			return false, fmt.Errorf("sim: t=%s: submit job %s: %w", FormatSeconds(r.now), j.id, err)
		}
		j.phase = phasePending
		r.addPending(j, +1)
		j.since = r.now
		r.emit(EventSubmit, j)
	case evFinish:
		if err := r.core.Apply(sched.Exited{ID: j.id}); err != nil {
			return false, fmt.Errorf("sim: t=%s: exit of finished job %s: %w", FormatSeconds(r.now), j.id, err)
		}
		j.phase = phaseExiting
		r.res.End = r.now
	case evExit:
		if err := r.core.Apply(sched.Exited{ID: j.id, ExitStatus: ExitPreempted}); err != nil {
			return false, fmt.Errorf("sim: t=%s: exit of preempted job %s: %w", FormatSeconds(r.now), j.id, err)
		}
		j.phase = phaseExiting
		r.res.End = r.now
		r.emit(EventExit, j)
	case evKill:
		if err := r.core.Apply(sched.Exited{ID: j.id, ExitStatus: ExitPreempted}); err != nil {
			return false, fmt.Errorf("sim: t=%s: exit of cancelled job %s: %w", FormatSeconds(r.now), j.id, err)
		}
		j.phase = phaseExiting
		r.res.End = r.now
		r.emit(EventExit, j)
	}
	return true, nil
}

// action applies one action. The core refusing it (a job that has ended or
// is not pending, for hold) is not an error of the run: the record says
// why.
func (r *runner) action(a *Action) error {
	var ev sched.Event
	id := sched.JobID(a.Target)
	switch a.Kind {
	case ActCancel:
		ev = sched.Cancelled{ID: id}
	case ActHold:
		ev = sched.HoldChanged{ID: id, Set: true, Bit: sched.HoldUser}
	case ActRelease:
		ev = sched.HoldChanged{ID: id, Set: false, Bit: sched.HoldUser}
	case ActPrio:
		ev = sched.PriorityChanged{ID: id, Priority: a.Value}
	case ActDown:
		ev = sched.NodeDown{Node: a.Target}
	case ActUp:
		ev = sched.NodeUp{Node: a.Target}
	case ActDrain:
		ev = sched.NodeDrained{Node: a.Target}
	case ActResume:
		ev = sched.NodeResumed{Node: a.Target}
	}
	var j *simJob
	if !a.Kind.onNode() {
		j = &r.jobs[r.byID[id]]
	}
	r.rec = Record{Kind: a.Kind.String()}
	if a.Kind.onNode() {
		r.rec.Node = a.Target
	}
	err := r.core.Apply(ev)
	switch {
	case err != nil && (j == nil || j.phase == phaseUnsubmitted || errors.Is(err, sched.ErrInvalid) || errors.Is(err, sched.ErrUnknownJob)):
		r.rec.Reason = "refused: " + err.Error()
	case err != nil:
		return fmt.Errorf("sim: t=%s: %s %s: %w", FormatSeconds(r.now), a.Kind, a.Target, err)
	case a.Kind == ActCancel && j.phase != phaseRunning:
		j.cancelled = true
	case a.Kind == ActCancel:
		j.cancelled = true
		// SIGTERM: the job stops working and exits after its grace time.
		r.stopWork(j, false)
		j.phase = phaseKilling
		j.gen++
		r.q.push(event{t: r.now + j.grace, kind: evKill, job: r.byID[j.id], gen: j.gen})
	}
	r.emitAction(j)
	return nil
}

// stopWork ends a run's work at now: the work since the last checkpoint is
// lost, and with no checkpoint interval the job saves on SIGTERM (sigterm)
// or loses the whole run (a node that died). It returns the work lost.
func (r *runner) stopWork(j *simJob, nodeLost bool) time.Duration {
	done := r.now - j.runStart
	saved := done
	if c := j.tj.Checkpoint; c > 0 {
		saved = done / c * c
	} else if nodeLost {
		saved = 0
	}
	lost := done - saved
	j.remaining -= saved
	return lost
}

// emitAction writes the record of an action (r.rec, set by the caller).
func (r *runner) emitAction(j *simJob) {
	if r.out == nil {
		r.rec = Record{}
		return
	}
	r.rec.T = seconds(r.now)
	r.rec.Event = EventAction
	if j != nil {
		r.rec.Job = string(j.id)
		r.rec.Share = j.tj.Share
	}
	r.out.write(&r.rec)
	r.rec = Record{}
}

func (r *runner) job(id sched.JobID, what string) (*simJob, error) {
	i, ok := r.byID[id]
	if !ok {
		return nil, fmt.Errorf("sim: t=%s: %s of unknown job %s: %w", FormatSeconds(r.now), what, id, ErrCore)
	}
	return &r.jobs[i], nil
}

func (r *runner) inconsistent(j *simJob, what string) error {
	return fmt.Errorf("sim: t=%s: %s of job %s in phase %d: %w", FormatSeconds(r.now), what, j.id, j.phase, ErrCore)
}

// carryOut does what the plan says, in the plan's order.
func (r *runner) carryOut(p *sched.Plan) error {
	for _, f := range p.Failed {
		j, err := r.job(f.Job, "fail")
		if err != nil {
			return err
		}
		if j.phase == phaseFinished || j.phase == phaseFailed {
			return r.inconsistent(j, "fail")
		}
		if j.phase == phasePending {
			j.queued += r.now - j.since
			r.addPending(j, -1)
		}
		j.phase = phaseFailed
		r.res.Shares[j.share].Failed++
		r.rec = Record{Reason: f.Reason.String()}
		r.emit(EventFail, j)
		r.ended1()
	}
	for _, rq := range p.Requeued {
		j, err := r.job(rq.Job, "requeue")
		if err != nil {
			return err
		}
		if j.phase != phaseExiting && j.phase != phaseRunning && j.phase != phasePreempting {
			return r.inconsistent(j, "requeue")
		}
		if rq.Cause == sched.CauseNodeLost {
			// Its node went down: the run's work since its last
			// checkpoint is lost.
			lost := r.stopWork(j, true)
			r.res.Shares[j.share].LostGPUHours += float64(j.gpus) * lost.Hours()
			r.res.Shares[j.share].NodeFailures++
		}
		j.phase = phasePending
		r.addPending(j, +1)
		j.since = r.now
		r.rec = Record{RemainingS: seconds(j.remaining)}
		r.emit(EventRequeue, j)
	}
	for _, id := range p.Finished {
		j, err := r.job(id, "finish")
		if err != nil {
			return err
		}
		switch {
		case j.phase == phaseExiting:
		case j.cancelled && (j.phase == phasePending || j.phase == phaseKilling || j.phase == phasePreempting):
			// Cancelled while pending, or a cancelled job whose node
			// went down.
			if j.phase == phasePending {
				j.queued += r.now - j.since
				r.addPending(j, -1)
			}
		default:
			return r.inconsistent(j, "finish")
		}
		j.phase = phaseFinished
		j.end = r.now
		if j.cancelled {
			r.res.Shares[j.share].Cancelled++
		} else {
			r.res.Shares[j.share].Finished++
		}
		r.emit(EventFinish, j)
		r.ended1()
	}
	for _, pr := range p.Preempts {
		j, err := r.job(pr.Victim, "preempt")
		if err != nil {
			return err
		}
		if j.phase != phaseRunning {
			return r.inconsistent(j, "preempt")
		}
		r.preempt(j, pr)
	}
	for i := range p.Starts {
		st := &p.Starts[i]
		j, err := r.job(st.Job, "start")
		if err != nil {
			return err
		}
		if j.phase != phasePending {
			return r.inconsistent(j, "start")
		}
		r.start(j, st)
	}
	if r.out != nil {
		for _, pe := range p.Pending {
			j, err := r.job(pe.Job, "pending reason")
			if err != nil {
				return err
			}
			r.rec = Record{Reason: pe.Reason.String()}
			r.emit(EventHold, j)
		}
	}
	return nil
}

func (r *runner) start(j *simJob, st *sched.Start) {
	j.phase = phaseRunning
	j.grace = st.Grace
	r.addPending(j, -1)
	j.gen++
	j.runStart = r.now
	j.queued += r.now - j.since
	if !j.started {
		j.started = true
		j.firstWait = r.now - j.tj.Submit
		if r.res.Topology {
			r.res.Topo.record(r.meter, j.tj, st.Allocs)
		}
	}
	r.q.push(event{t: r.now + j.remaining, kind: evFinish, job: r.byID[j.id], gen: j.gen})
	if r.out == nil {
		return
	}
	r.rec = Record{}
	if len(st.Allocs) == 1 {
		r.rec.Node, r.rec.GPUs = st.Allocs[0].Node, st.Allocs[0].GPUs
	} else {
		r.rec.Nodes = make([]NodeGPUs, len(st.Allocs))
		for i, a := range st.Allocs {
			r.rec.Nodes[i] = NodeGPUs{Node: a.Node, GPUs: a.GPUs}
		}
	}
	r.emit(EventStart, j)
}

// preempt records the SIGTERM: the work since the last checkpoint is lost
// (with no checkpoint interval the job saves on SIGTERM and loses none),
// and the job exits, freeing its GPUs, after its grace time.
func (r *runner) preempt(j *simJob, pr sched.Preemption) {
	lost := r.stopWork(j, false)
	j.phase = phasePreempting
	sr := &r.res.Shares[j.share]
	sr.Preemptions++
	sr.LostGPUHours += float64(j.gpus) * lost.Hours()
	sr.GraceGPUHours += float64(j.gpus) * pr.Grace.Hours()
	r.q.push(event{t: r.now + pr.Grace, kind: evExit, job: r.byID[j.id], gen: j.gen})
	r.rec = Record{By: string(pr.For), Kind: pr.Kind.String(), LostS: seconds(lost)}
	r.emit(EventPreempt, j)
}

func (r *runner) ended1() {
	r.ended++
	if r.opt.Progress != nil && r.ended%ProgressEvery == 0 {
		r.opt.Progress(r.ended)
	}
}

// emit writes r.rec (extra fields set by the caller) completed for job j.
func (r *runner) emit(ev string, j *simJob) {
	if r.out != nil {
		r.rec.T = seconds(r.now)
		r.rec.Event = ev
		r.rec.Job = string(j.id)
		r.rec.Share = j.tj.Share
		r.out.write(&r.rec)
	}
	r.rec = Record{}
}

// integrate adds the usage held constant since the previous pass.
func (r *runner) integrate(t time.Duration) {
	dt := (t - r.last).Hours()
	if dt <= 0 {
		return
	}
	for i := range r.inUse {
		sr := &r.res.Shares[i]
		own := min(r.inUse[i], sr.Quota)
		sr.OwnGPUHours += float64(own) * dt
		sr.BorrowedGPUHours += float64(r.borrow[i]) * dt
		sr.LentGPUHours += float64(r.lent[i]) * dt
		r.res.BusyGPUHours += float64(r.inUse[i]) * dt
	}
	r.fair.add(r.last, t, r.borrow, r.wanting)
	r.fairFit.add(r.last, t, r.borrow, r.wantFit)
	r.last = t
}

// snapshot reads the shares' standing after a pass.
func (r *runner) snapshot() {
	changed := false
	var shares []sched.ShareUsage
	if r.held {
		r.held = false
		shares = r.core.Shares()
	}
	for _, su := range shares {
		i, ok := r.shareIdx[su.Share]
		if !ok {
			continue
		}
		if r.inUse[i] != su.InUse {
			changed = true
		}
		r.inUse[i], r.borrow[i], r.lent[i] = su.InUse, su.Borrowed, su.Lent
	}
	for i := range r.wanting {
		sr := &r.res.Shares[i]
		room := sr.BorrowLimit < 0 || r.borrow[i] < sr.Quota*sr.BorrowLimit/100
		r.wanting[i] = sr.Strategy == sched.LendAndBorrow && r.pending[i] > 0 && r.inUse[i] >= sr.Quota && room
		r.wantFit[i] = r.wanting[i] && (sr.BorrowLimit < 0 || r.borrow[i]+r.smallestPending(i) <= sr.Quota*sr.BorrowLimit/100)
	}
	if changed && r.res.Usage != nil {
		r.res.Usage.add(r.now, r.inUse)
	}
}

// finish turns the per-job records into the result's statistics.
func (r *runner) finish() {
	res := r.res
	queuedMS := make([]int64, len(res.Shares)) // exact sums; no overflow before 290 million years
	for i := range r.jobs {
		j := &r.jobs[i]
		sr := &res.Shares[j.share]
		switch {
		case !j.started && j.phase != phaseFailed:
			sr.NeverStarted++
		case j.phase == phasePending:
			sr.Unfinished++
		}
		if j.phase == phasePending {
			j.queued += r.now - j.since
		}
		if j.started {
			sr.Waits = append(sr.Waits, j.firstWait)
			res.Waits = append(res.Waits, j.firstWait)
			c := sizeClass(j.gpus)
			res.SizeWaits[c] = append(res.SizeWaits[c], j.firstWait)
			if j.tj.Group != "" {
				res.Topo.GroupWaits = append(res.Topo.GroupWaits, j.firstWait)
			}
		}
		if j.phase == phaseFinished && !j.cancelled {
			sr.Slowdowns = append(sr.Slowdowns, float64(j.end-j.tj.Submit)/float64(j.tj.Duration))
		}
		queuedMS[j.share] += j.queued.Milliseconds()
	}
	for i := range res.Shares {
		res.Shares[i].QueuedHours = float64(queuedMS[i]) / float64(time.Hour/time.Millisecond)
		slices.Sort(res.Shares[i].Waits)
		slices.Sort(res.Shares[i].Slowdowns)
	}
	res.WindowJain, res.JainWindows = r.fair.finish()
	res.WindowJainFit, res.JainWindowsFit = r.fairFit.finish()
	slices.Sort(res.Waits)
	slices.Sort(res.Topo.Spans)
	slices.Sort(res.Topo.GroupWaits)
	for _, w := range res.SizeWaits {
		slices.Sort(w)
	}
	if res.Usage != nil {
		res.Usage.add(r.now, r.inUse)
	}
}

// addPending counts j in (d = +1) or out of (d = -1) its share's pending
// jobs.
func (r *runner) addPending(j *simJob, d int) {
	r.pending[j.share] += d
	m := r.pendSizes[j.share]
	if m[j.gpus] += d; m[j.gpus] <= 0 {
		delete(m, j.gpus)
	}
}

// smallestPending is the GPUs of share i's smallest pending job (0: none).
func (r *runner) smallestPending(i int) int {
	least := 0
	for g := range r.pendSizes[i] {
		if least == 0 || g < least {
			least = g
		}
	}
	return least
}

// wake queues a pass at the core's NextWake (a begin time, a fair
// preemption refused for time), as the controller runs one then; one
// wake-up is queued at a time, the earliest.
func (r *runner) wake(now time.Duration) {
	w, ok := r.core.NextWake()
	if !ok {
		return
	}
	t := w.Sub(Epoch)
	if t <= now || (r.wakeAt >= 0 && r.wakeAt <= t) {
		return
	}
	r.wakeAt = t
	r.q.push(event{t: t, kind: evWake})
}
