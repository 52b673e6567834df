package ctld

import (
	"fmt"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/jobid"
)

// pass runs the scheduling core and carries its plan out: records change
// now (and are written by the following flush), orders go out after it.
func (c *Controller) pass() {
	c.needPass = false
	start := time.Now()
	plan := c.core.Schedule(c.now())
	c.met.passSeconds.Observe(time.Since(start).Seconds())
	now := plan.Now
	if len(plan.Starts)+len(plan.Preempts)+len(plan.Requeued)+len(plan.Failed)+len(plan.Finished) > 0 {
		c.log.Debug("scheduling pass", "starts", len(plan.Starts), "preempts", len(plan.Preempts),
			"requeued", len(plan.Requeued), "finished", len(plan.Finished), "failed", len(plan.Failed),
			"reasons", len(plan.Pending), "took", time.Since(start))
	}
	for _, f := range plan.Failed {
		if j := c.jobs[string(f.Job)]; j != nil {
			var status *int
			reason := f.Reason.String()
			if f.Cause != 0 {
				j.setCounts(f.Counts)
			}
			if f.Reason == sched.ReasonStartFailureRetries || f.Reason == sched.ReasonStartRefused {
				st := -1 // as PBS's JOB_EXEC_FAIL1: the job never ran
				status = &st
				if j.startErr != "" {
					// The comment says why (qstat -f), not only the
					// history: "StartRefused: job work directory refused: ...".
					reason += ": " + j.startErr
				}
			}
			c.finish(j, now, status, reason, "failed: "+f.Reason.String())
		}
	}
	for _, rq := range plan.Requeued {
		if j := c.jobs[string(rq.Job)]; j != nil {
			c.requeue(j, now, rq)
		}
	}
	for _, id := range plan.Finished {
		if j := c.jobs[string(id)]; j != nil && !j.finished() {
			c.finish(j, now, j.ExitStatus, j.Reason, "finished")
		}
	}
	for _, p := range plan.Preempts {
		c.preempt(p, now)
	}
	for _, s := range plan.Starts {
		c.start(s, now)
	}
	for _, h := range plan.Holds {
		c.systemHold(h, now)
	}
	for _, pr := range plan.Pending {
		j := c.jobs[string(pr.Job)]
		if j == nil || j.running() || j.finished() {
			continue
		}
		reason := pr.Reason.String()
		if pr.Reason == sched.ReasonNone {
			reason = ""
		}
		st := pendingState(j, pr.Reason)
		if j.State != st {
			c.markDirty(j.ID)
		}
		if eligibleReason(pr.Reason) && j.Acct.Eligible.IsZero() {
			j.noteEligible(now)
			c.markDirty(j.ID)
		}
		j.Reason, j.State = reason, st
	}
	c.updateShareMetrics()
}

// start carries out one start: the record first, then an order per node.
func (c *Controller) start(s sched.Start, now time.Time) {
	var j *job
	if s.Array != "" {
		parent := c.jobs[string(s.Array)]
		if parent == nil {
			c.coreRefused("start of subjob of unknown array", "array", s.Array)
			return
		}
		j = c.jobs[string(s.Job)]
		if j == nil {
			j = newSubjob(parent, string(s.Job), s.Index)
			c.jobs[j.ID] = j
		}
		if parent.State != api.StateArray {
			parent.State = api.StateArray
			parent.Reason = ""
			if parent.StartTime.IsZero() {
				parent.StartTime = now
			}
			c.markDirty(parent.ID)
		}
	} else if j = c.jobs[string(s.Job)]; j == nil {
		c.coreRefused("start of unknown job", "job", s.Job)
		return
	}
	j.State, j.Reason, j.StartTime = api.StateRunning, "", now
	j.Acct.RunBorrowed = s.Borrowed
	j.Allocs = make([]api.Alloc, len(s.Allocs))
	j.parts = map[string]*part{}
	nodes := make([]string, len(s.Allocs))
	var where []string
	for i, a := range s.Allocs {
		j.Allocs[i] = api.Alloc{Node: a.Node, GPUs: a.GPUs}
		j.parts[a.Node] = &part{}
		nodes[i] = a.Node
		where = append(where, fmt.Sprintf("%s%v", a.Node, a.GPUs))
	}
	j.Runs++
	j.Stopping = ""
	j.noteEligible(now)
	j.history(now, "started on "+strings.Join(where, " "))
	c.markDirty(j.ID)
	c.met.startLatency.Observe(now.Sub(j.SubmitTime).Seconds())
	c.startDefaults(j, nodes)
	order := startOrder(j, s, nodes)
	for _, a := range s.Allocs {
		o := order
		o.GPUs = a.GPUs
		c.sendNode(a.Node, api.NodeMsg{Type: api.MsgStart, Start: &o})
	}
}

// newSubjob makes subjob index i of an array job.
func newSubjob(parent *job, id string, i int) *job {
	j := &job{Job: parent.Job}
	j.ID, j.ArrayParent, j.ArrayIndex = id, parent.ID, i
	j.ArrayIndices, j.ArrayMax = jobid.Range{}, 0
	j.Env = map[string]string{}
	for k, v := range parent.Env {
		j.Env[k] = v
	}
	j.Stdout, j.Stderr = api.SubjobOutputPaths(parent.Stdout, parent.Stderr, i)
	j.History, j.Runs, j.Preemptions, j.NodeFailures, j.StartFailures, j.StartTime = nil, 0, 0, 0, 0, time.Time{}
	j.Acct = api.Usage{Eligible: parent.Acct.Eligible}
	j.history(parent.SubmitTime, "submitted as part of "+parent.ID)
	return j
}

// startOrder is the order a node needs to run its part of j, with what
// the core resolved for the start.
func startOrder(j *job, s sched.Start, nodes []string) api.StartOrder {
	return api.StartOrder{Job: runSpec(j), Run: j.Runs - 1, NodeList: nodes, Image: s.Image, Grace: s.Grace, Walltime: s.Walltime}
}

// runSpec is what a node needs of j (api.RunSpec): none of its
// accounting, history or counters.
func runSpec(j *job) api.RunSpec {
	return api.RunSpec{
		ID: j.ID, Name: j.Name, Share: j.Share, ArrayParent: j.ArrayParent, ArrayIndex: j.ArrayIndex,
		Owner:  j.Owner,
		Script: j.Script, Shell: j.Shell, Command: j.Command, WorkDir: j.WorkDir, Env: j.Env,
		Stdout: j.Stdout, Stderr: j.Stderr, Umask: j.Umask, Interactive: j.Interactive,
		Resources: api.RunResources{CPUsPerNode: j.Resources.CPUsPerNode, MemPerNode: j.Resources.MemPerNode,
			MPIProcs: j.Resources.MPIProcs, OMPThreads: j.Resources.OMPThreads},
	}
}

// grace is the grace of a stop the controller decides (qdel, qrerun):
// the core's resolution for the job under the configuration as it is now
// (capped by the partition's max_preempt_grace also when a reload lowered
// the cap after the job was submitted).
func (c *Controller) grace(j *job) time.Duration {
	if g, ok := c.core.JobGrace(sched.JobID(j.ID)); ok {
		return g
	}
	return sched.Grace(nil, schedGrace(j.Grace)) // a job the core no longer holds
}

// schedGrace is a job's qsub -W grace as the core takes it: none asked
// for is its partition's.
func schedGrace(g time.Duration) time.Duration {
	if g <= 0 {
		return sched.DefaultGrace
	}
	return g
}

// systemHold records a system hold the core set on a pending job, or
// released.
func (c *Controller) systemHold(h sched.HoldChange, now time.Time) {
	j := c.jobs[string(h.Job)]
	if j == nil || j.running() || j.finished() {
		return
	}
	had := holdBits(j.Hold)
	bits := had &^ h.Bit
	if h.Set {
		bits |= h.Bit
	}
	if bits == had {
		return
	}
	j.Hold = holdLetters(bits)
	if h.Set {
		j.history(now, "held by the system: "+h.Reason.String())
	} else {
		j.history(now, "released by the system: it fits now")
	}
	c.markDirty(j.ID)
}

// preempt sends SIGTERM (and later SIGKILL) to a victim.
func (c *Controller) preempt(p sched.Preemption, now time.Time) {
	j := c.jobs[string(p.Victim)]
	if j == nil {
		return
	}
	j.Stopping = "preempted"
	j.State = api.StateExiting
	j.Acct.StopSent = now
	j.history(now, fmt.Sprintf("preempted (%s) for %s", p.Kind, p.For))
	c.markDirty(j.ID)
	c.preempted[j.Share]++
	c.met.preemptions.WithLabelValues(j.Share, p.Kind.String()).Inc()
	c.stopJobWithin(j, api.StopPreempted, p.Grace)
}

// stopJob orders every node of a running job to stop it.
func (c *Controller) stopJob(j *job, reason api.StopReason) {
	c.stopJobWithin(j, reason, c.grace(j))
}

// stopJobWithin orders j stopped with grace g. A node that is already
// stopping the job keeps the earlier of its deadline and now+g, so a
// second stop can shorten a stop, never lengthen it.
func (c *Controller) stopJobWithin(j *job, reason api.StopReason, g time.Duration) {
	for _, a := range j.Allocs {
		if p := j.parts[a.Node]; p != nil && p.exited {
			continue
		}
		c.sendNode(a.Node, api.NodeMsg{Type: api.MsgStop, Stop: &api.StopOrder{JobID: j.ID, Grace: g, Reason: reason}})
	}
}

// requeue puts a job that ran back in the queue, as the core did: its
// counters and where its checkpoint is are the core's.
func (c *Controller) requeue(j *job, now time.Time, rq sched.Requeue) {
	j.setCounts(rq.Counts)
	n := rq.Counts.Of(rq.Cause)
	var what string
	switch rq.Cause {
	case sched.CauseStartFailed, sched.CauseStartRefused:
		what = fmt.Sprintf("requeued (its start failed, %d %s)", n, timesWord(n))
	case sched.CauseNodeLost:
		what = fmt.Sprintf("requeued (lost its node, %d %s)", n, timesWord(n))
	default:
		what = fmt.Sprintf("requeued (preempted %d %s)", n, timesWord(n))
	}
	c.backToQueue(j, now, what, rq.PreferNode)
}

// setCounts takes the core's retry counters.
func (j *job) setCounts(n sched.Counts) {
	j.Preemptions, j.NodeFailures, j.StartFailures = n.Preemptions, n.NodeFailures, n.StartFailures
}

func timesWord(n int) string {
	if n == 1 {
		return "time"
	}
	return "times"
}

// backToQueue ends a job's run and makes it pending again; prefer is
// where the core will prefer to restart it: the node holding its
// checkpoint, in a partition whose checkpoints are node-local.
func (c *Controller) backToQueue(j *job, now time.Time, what, prefer string) {
	c.accountRun(j, now)
	j.State, j.Allocs, j.parts, j.Stopping, j.Reason, j.RequeueAt = api.StateQueued, nil, nil, "", "", time.Time{}
	j.RerunWhy = ""
	if prefer != j.CheckpointNode {
		j.CheckpointNode = prefer
		if j.CheckpointNode != "" {
			what += "; its checkpoint is on " + j.CheckpointNode
		}
	}
	j.history(now, what)
	c.markDirty(j.ID)
}

// finish ends a job for good and wakes qsub -W block waiters. Its outcome
// is its exit status's, or deleted when qdel stopped its run.
func (c *Controller) finish(j *job, now time.Time, status *int, reason, what string) {
	o := api.ExitOutcome(status)
	if j.Stopping == string(api.StopDeleted) {
		o = api.OutcomeDeleted
	}
	c.finishAs(j, now, status, reason, what, o)
}

// finishDeleted ends a job qdel deleted (pending, or its run already gone).
func (c *Controller) finishDeleted(j *job, now time.Time, what string) {
	c.finishAs(j, now, nil, "Deleted", what, api.OutcomeDeleted)
}

func (c *Controller) finishAs(j *job, now time.Time, status *int, reason, what string, o api.Outcome) {
	c.accountRun(j, now)
	j.State, j.Reason, j.ExitStatus, j.EndTime, j.Outcome = api.StateFinished, reason, status, now, o
	j.parts, j.Stopping, j.RequeueAt = nil, "", time.Time{}
	j.RerunWhy = ""
	j.GPURun = api.SummarizeGPUUse(j.GPUUse, j.Acct.Owned+j.Acct.Borrowed)
	j.history(now, what)
	c.markDirty(j.ID)
	c.refund(j)
	if c.hist != nil {
		c.hist.add(historyRecord(&j.Job))
	}
	c.wake(j)
}

// accountRun adds the run that just ended to the job's used time.
func (c *Controller) accountRun(j *job, now time.Time) {
	if j.running() && !j.StartTime.IsZero() {
		j.Used += now.Sub(j.StartTime)
		j.accountGPUs(now)
	}
}

// wake answers the qsub -W block requests waiting for j.
func (c *Controller) wake(j *job) {
	for _, f := range c.waiters[j.ID] {
		f(j)
	}
	delete(c.waiters, j.ID)
}

// coreRefusal marks the log record of an event the core refused, or of a
// plan naming a job the controller lacks, where the controller's records
// said all was well: the two disagree, which is a bug. The tests fail on
// such a record (harness_test.go's failOnCoreRefusal).
const coreRefusal = "core_refused"

// coreRefused logs such a disagreement.
func (c *Controller) coreRefused(msg string, args ...any) {
	c.log.Error(msg, append(args, coreRefusal, true)...)
}

// apiAllocs converts the core's placements for the API.
func apiAllocs(as []sched.Alloc) []api.Alloc {
	out := make([]api.Alloc, len(as))
	for i, a := range as {
		out[i] = api.Alloc{Node: a.Node, GPUs: a.GPUs}
	}
	return out
}
