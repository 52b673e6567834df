package ctld

import (
	"math"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Job accounting: what each run's GPUs cost, kept in the job's api.Usage
// (and so in the spool) until the job ends and its history record is
// written.

// borrowSplit says, for each start of a plan, how many of its GPUs are
// beyond its share's quota: the starts are taken in order on top of what
// the share held before the pass. A run keeps that split until it ends.
func (c *Controller) borrowSplit(starts []sched.Start) []int {
	if len(starts) == 0 {
		return nil
	}
	type standing struct{ quota, held int }
	shares := map[string]*standing{}
	for _, u := range c.core.Shares() {
		shares[u.Share] = &standing{quota: u.Quota, held: u.InUse}
	}
	gpus := func(s sched.Start) int {
		n := 0
		for _, a := range s.Allocs {
			n += len(a.GPUs)
		}
		return n
	}
	// Shares() already counts this plan's starts.
	for _, s := range starts {
		if sh := shares[s.Share]; sh != nil {
			sh.held -= gpus(s)
		}
	}
	out := make([]int, len(starts))
	for i, s := range starts {
		sh := shares[s.Share]
		if sh == nil {
			continue
		}
		g := gpus(s)
		owned := min(max(sh.quota-sh.held, 0), g)
		out[i] = g - owned
		sh.held += g
	}
	return out
}

// eligibleReason: a job pending for this reason could start if there were
// room; one held, waiting for dependencies or its begin time could not.
func eligibleReason(r sched.Reason) bool {
	switch r {
	case sched.ReasonHeld, sched.ReasonDependency, sched.ReasonBeginTime, sched.ReasonNeverFits,
		sched.ReasonShareRemoved, sched.ReasonDependencyNeverMet, sched.ReasonPreemptionRetries:
		return false
	}
	return !r.NeverFits()
}

// noteEligible sets the job's eligible time the first time it could start.
func (j *job) noteEligible(now time.Time) {
	if j.Acct.Eligible.IsZero() {
		j.Acct.Eligible = now
	}
}

// accountGPUs adds the run that ends now to the job's GPU-seconds.
func (j *job) accountGPUs(now time.Time) {
	gpus := 0
	for _, a := range j.Allocs {
		gpus += len(a.GPUs)
	}
	d := now.Sub(j.StartTime).Seconds()
	if d < 0 {
		d = 0
	}
	borrowed := min(j.Acct.RunBorrowed, gpus)
	j.Acct.Owned += float64(gpus-borrowed) * d
	j.Acct.Borrowed += float64(borrowed) * d
	if j.Stopping == "preempted" {
		j.Acct.Lost += float64(gpus) * d
		if !j.Acct.StopSent.IsZero() && now.After(j.Acct.StopSent) {
			j.Acct.Grace += float64(gpus) * now.Sub(j.Acct.StopSent).Seconds()
		}
	}
	j.Acct.RunBorrowed, j.Acct.StopSent = 0, time.Time{}
}

// historyRecord is the job's history record; stopping is why its last run
// was stopped ("deleted", "preempted", ...), if it was.
func historyRecord(j *job, stopping string) acct.Record {
	r := acct.Record{
		ID: j.ID, Seq: j.Seq, ArrayParent: j.ArrayParent, ArrayIndex: j.ArrayIndex, ArrayIndices: j.ArrayIndices,
		Name: j.Name, User: j.Owner.User, UID: j.Owner.UID, GID: j.Owner.GID, Share: j.Share, Partition: j.Partition,
		Nodes: max(j.Resources.Nodes, 1), GPUsPerNode: j.Resources.GPUsPerNode, CPUsPerNode: j.Resources.CPUsPerNode,
		MemPerNode: j.Resources.MemPerNode, Walltime: j.Resources.Walltime,
		Submit: j.SubmitTime, Eligible: j.Acct.Eligible, Start: j.StartTime, End: j.EndTime, Used: j.Used,
		Runs: j.Runs, Preemptions: j.Preemptions, ExitStatus: j.ExitStatus, Reason: j.Reason,
		OwnedGPUSeconds: j.Acct.Owned, BorrowedGPUSeconds: j.Acct.Borrowed,
		LostGPUSeconds: j.Acct.Lost, GraceGPUSeconds: j.Acct.Grace,
	}
	if u := j.GPUUse; u != nil && u.Samples > 0 {
		// Its last run's sampled use, spread over all it held.
		gs := j.Acct.Owned + j.Acct.Borrowed
		r.GPUMeanUtil = min(max(u.MeanUtil, 0), 100)
		r.GPUPeakMem = int64(min(u.PeakMemBytes, math.MaxInt64))
		r.SampledGPUSeconds = gs
		r.IdleGPUSeconds = gs * float64(min(u.IdleSamples, u.Samples)) / float64(u.Samples)
		r.UtilGPUSeconds = gs * r.GPUMeanUtil / 100
	}
	// Where its last run ran (finish keeps Allocs; a job that never ran has none).
	for _, a := range j.Allocs {
		r.Allocs = append(r.Allocs, acct.Alloc{Node: a.Node, GPUs: a.GPUs})
	}
	switch {
	case stopping == "deleted" || j.Reason == "Deleted":
		r.Outcome = acct.Deleted
	case j.ExitStatus != nil && *j.ExitStatus == 0:
		r.Outcome = acct.Completed
	default:
		r.Outcome = acct.Failed
	}
	if len(r.Name) > acct.MaxNameLen {
		r.Name = r.Name[:acct.MaxNameLen]
	}
	if len(r.Reason) > acct.MaxTextLen {
		r.Reason = r.Reason[:acct.MaxTextLen]
	}
	return r
}

// apiJob turns a history record back into the job qstat shows.
func apiJob(r acct.Record) api.Job {
	j := api.Job{
		ID: r.ID, Seq: r.Seq, Name: r.Name, Owner: api.Owner{User: r.User, UID: r.UID, GID: r.GID},
		Share: r.Share, Partition: r.Partition, ArrayParent: r.ArrayParent, ArrayIndex: r.ArrayIndex,
		ArrayIndices: r.ArrayIndices, State: api.StateFinished, Reason: r.Reason, Preemptions: r.Preemptions,
		Runs: r.Runs, ExitStatus: r.ExitStatus, SubmitTime: r.Submit, StartTime: r.Start, EndTime: r.End, Used: r.Used,
		Resources: api.Resources{Nodes: r.Nodes, GPUsPerNode: r.GPUsPerNode, CPUsPerNode: r.CPUsPerNode,
			MemPerNode: r.MemPerNode, Walltime: r.Walltime},
		Acct: api.Usage{Eligible: r.Eligible, Owned: r.OwnedGPUSeconds, Borrowed: r.BorrowedGPUSeconds,
			Lost: r.LostGPUSeconds, Grace: r.GraceGPUSeconds, Recorded: true},
	}
	for _, a := range r.Allocs {
		j.Allocs = append(j.Allocs, api.Alloc{Node: a.Node, GPUs: a.GPUs})
	}
	return j
}
