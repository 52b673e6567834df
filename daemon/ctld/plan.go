package ctld

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
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
			if f.Reason == sched.ReasonStartFailureRetries || f.Reason == sched.ReasonStartRefused {
				st := -1 // as PBS's JOB_EXEC_FAIL1: the job never ran
				status = &st
				j.StartFailures++
				if j.startErr != "" {
					// The comment says why (qstat -f), not only the
					// history: "StartRefused: job work directory refused: ...".
					reason += ": " + j.startErr
				}
			}
			c.finish(j, now, status, reason, "failed: "+f.Reason.String())
		}
	}
	for _, id := range plan.Requeued {
		if j := c.jobs[string(id)]; j != nil {
			c.requeue(j, now)
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
	split := c.borrowSplit(plan.Starts)
	for i, s := range plan.Starts {
		c.start(s, now)
		if j := c.jobs[string(s.Job)]; j != nil {
			j.Acct.RunBorrowed = split[i]
		}
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
		if pr.Reason.NeverFits() && !strings.Contains(j.Hold, "s") {
			j.Hold += "s"
			j.history(now, "held by the system: "+reason)
			c.markDirty(j.ID)
		}
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
			c.log.Error("start of subjob of unknown array", "array", s.Array)
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
		c.log.Error("start of unknown job", "job", s.Job)
		return
	}
	j.State, j.Reason, j.StartTime = api.StateRunning, "", now
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
	order := c.startOrder(j, nodes)
	for i, a := range s.Allocs {
		o := order
		o.GPUs = a.GPUs
		_ = i
		c.sendNode(a.Node, api.NodeMsg{Type: api.MsgStart, Start: &o})
	}
}

// newSubjob makes subjob index i of an array job.
func newSubjob(parent *job, id string, i int) *job {
	j := &job{Job: parent.Job}
	j.ID, j.ArrayParent, j.ArrayIndex = id, parent.ID, i
	j.ArrayIndices, j.ArrayMax = "", 0
	j.Env = map[string]string{}
	for k, v := range parent.Env {
		j.Env[k] = v
	}
	j.Stdout = subjobPath(parent.Stdout, i)
	if parent.Stderr == parent.Stdout {
		j.Stderr = j.Stdout
	} else {
		j.Stderr = subjobPath(parent.Stderr, i)
	}
	j.History, j.Runs, j.Preemptions, j.NodeFailures, j.StartFailures, j.StartTime = nil, 0, 0, 0, 0, time.Time{}
	j.Acct = api.Usage{Eligible: parent.Acct.Eligible}
	j.history(parent.SubmitTime, "submitted as part of "+parent.ID)
	return j
}

// arrayIndexPlaceholder in a -o or -e path is PBS's stand-in for the
// subjob's index.
const arrayIndexPlaceholder = "^array_index^"

// subjobPath gives each subjob its own output file: the index replaces
// ^array_index^ where the path has it (out.^array_index^.log ->
// out.7.log), else it is appended (NAME.o12 -> NAME.o12.7). /dev/null
// stays /dev/null: every subjob discards its output there.
func subjobPath(p string, i int) string {
	if p == os.DevNull {
		return p
	}
	if strings.Contains(p, arrayIndexPlaceholder) {
		return strings.ReplaceAll(p, arrayIndexPlaceholder, strconv.Itoa(i))
	}
	return fmt.Sprintf("%s.%d", p, i)
}

// startOrder is the order a node needs to run its part of j.
func (c *Controller) startOrder(j *job, nodes []string) api.StartOrder {
	p := c.cfg.Partition(j.Partition)
	o := api.StartOrder{Job: j.Job, Run: j.Runs - 1, NodeList: nodes}
	o.Job.History = nil
	o.Image, o.Grace, o.Walltime = j.Image, j.Grace, j.Resources.Walltime
	if p != nil {
		if o.Image == "" {
			o.Image = p.DefaultImage
		}
		o.Grace = c.grace(j)
		if o.Walltime == 0 {
			o.Walltime = p.DefaultWalltime // what the core's reservations count with
		}
	}
	return o
}

// grace is the job's checkpoint grace period.
// It is capped by the partition's max_preempt_grace (also when a reload
// lowered the cap after the job was submitted).
func (c *Controller) grace(j *job) time.Duration {
	p := c.cfg.Partition(j.Partition)
	g := j.Grace
	if g <= 0 {
		g = 30 * time.Second
		if p != nil {
			g = p.PreemptGrace
		}
	}
	if p != nil && p.MaxPreemptGrace > 0 {
		g = min(g, p.MaxPreemptGrace)
	}
	return g
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
	c.stopJob(j, api.StopPreempted)
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

// requeue puts a job that ran back in the queue.
func (c *Controller) requeue(j *job, now time.Time) {
	info, ok := c.core.Job(sched.JobID(j.ID))
	if ok && info.Job.StartFailures > j.StartFailures {
		j.StartFailures = info.Job.StartFailures
		c.backToQueue(j, now, fmt.Sprintf("requeued (its start failed, %d %s)", j.StartFailures, timesWord(j.StartFailures)))
		return
	}
	if ok && info.Job.NodeFailures > j.NodeFailures {
		j.NodeFailures = info.Job.NodeFailures
		c.backToQueue(j, now, fmt.Sprintf("requeued (lost its node, %d %s)", j.NodeFailures, timesWord(j.NodeFailures)))
		return
	}
	if ok {
		j.Preemptions = info.Job.Preemptions
	}
	c.backToQueue(j, now, fmt.Sprintf("requeued (preempted %d %s)", j.Preemptions, timesWord(j.Preemptions)))
}

func timesWord(n int) string {
	if n == 1 {
		return "time"
	}
	return "times"
}

// backToQueue ends a job's run and makes it pending again.
func (c *Controller) backToQueue(j *job, now time.Time, what string) {
	c.accountRun(j, now)
	j.State, j.Allocs, j.parts, j.Stopping, j.Reason, j.RequeueAt = api.StateQueued, nil, nil, "", "", time.Time{}
	j.RerunWhy = ""
	// Where the core will prefer to restart it: the node holding its
	// checkpoint, in a partition whose checkpoints are node-local.
	if info, ok := c.core.Job(sched.JobID(j.ID)); ok && info.Job.PreferNode != j.CheckpointNode {
		j.CheckpointNode = info.Job.PreferNode
		if j.CheckpointNode != "" {
			what += "; its checkpoint is on " + j.CheckpointNode
		}
	}
	j.history(now, what)
	c.markDirty(j.ID)
}

// finish ends a job for good and wakes qsub -W block waiters.
func (c *Controller) finish(j *job, now time.Time, status *int, reason, what string) {
	c.accountRun(j, now)
	stopping := j.Stopping
	j.State, j.Reason, j.ExitStatus, j.EndTime = api.StateFinished, reason, status, now
	j.parts, j.Stopping, j.RequeueAt = nil, "", time.Time{}
	j.RerunWhy = ""
	j.history(now, what)
	c.markDirty(j.ID)
	c.refund(j)
	if c.hist != nil {
		c.hist.add(historyRecord(j, stopping))
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

// apiAllocs converts the core's placements for the API.
func apiAllocs(as []sched.Alloc) []api.Alloc {
	out := make([]api.Alloc, len(as))
	for i, a := range as {
		out[i] = api.Alloc{Node: a.Node, GPUs: a.GPUs}
	}
	return out
}
