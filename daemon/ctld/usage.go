package ctld

import (
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/jobid"
)

// Job accounting: what each run's GPUs cost, kept in the job's api.Usage
// (and so in the spool) until the job ends and its history record is
// written. How many of a run's GPUs are borrowed is the core's
// (sched.Start.Borrowed).

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

// historyField is one row of the mapping between a finished job (api.Job,
// what qstat shows) and its history record (acct.Record): it copies one
// field each way. historyFields is the only place the two meet, and
// TestHistoryMapping fails when either type gains a field no row (or its
// list of fields the history does not keep) covers.
type historyField struct {
	name     string
	toRecord func(*api.Job, *acct.Record)
	toJob    func(*acct.Record, *api.Job)
}

// same is the row of a field both sides hold as the same type.
func same[T any](name string, jf func(*api.Job) *T, rf func(*acct.Record) *T) historyField {
	return historyField{name,
		func(j *api.Job, r *acct.Record) { *rf(r) = *jf(j) },
		func(r *acct.Record, j *api.Job) { *jf(j) = *rf(r) }}
}

var historyFields = []historyField{
	same("id", func(j *api.Job) *string { return &j.ID }, func(r *acct.Record) *string { return &r.ID }),
	same("seq", func(j *api.Job) *uint64 { return &j.Seq }, func(r *acct.Record) *uint64 { return &r.Seq }),
	same("array parent", func(j *api.Job) *string { return &j.ArrayParent }, func(r *acct.Record) *string { return &r.ArrayParent }),
	same("array index", func(j *api.Job) *int { return &j.ArrayIndex }, func(r *acct.Record) *int { return &r.ArrayIndex }),
	{"array indices", // written as the wire writes them; a record's unreadable indices show as none
		func(j *api.Job, r *acct.Record) { r.ArrayIndices = j.ArrayIndices.Text() },
		func(r *acct.Record, j *api.Job) {
			if rng, err := jobid.ParseIndices(r.ArrayIndices); err == nil {
				j.ArrayIndices = rng
			}
		}},
	same("name", func(j *api.Job) *string { return &j.Name }, func(r *acct.Record) *string { return &r.Name }),
	same("user", func(j *api.Job) *string { return &j.Owner.User }, func(r *acct.Record) *string { return &r.User }),
	same("uid", func(j *api.Job) *uint32 { return &j.Owner.UID }, func(r *acct.Record) *uint32 { return &r.UID }),
	same("gid", func(j *api.Job) *uint32 { return &j.Owner.GID }, func(r *acct.Record) *uint32 { return &r.GID }),
	same("share", func(j *api.Job) *string { return &j.Share }, func(r *acct.Record) *string { return &r.Share }),
	same("partition", func(j *api.Job) *string { return &j.Partition }, func(r *acct.Record) *string { return &r.Partition }),
	{"nodes", // a job asks for at least one
		func(j *api.Job, r *acct.Record) { r.Nodes = max(j.Resources.Nodes, 1) },
		func(r *acct.Record, j *api.Job) { j.Resources.Nodes = r.Nodes }},
	same("gpus per node", func(j *api.Job) *int { return &j.Resources.GPUsPerNode }, func(r *acct.Record) *int { return &r.GPUsPerNode }),
	same("cpus per node", func(j *api.Job) *int { return &j.Resources.CPUsPerNode }, func(r *acct.Record) *int { return &r.CPUsPerNode }),
	same("mem per node", func(j *api.Job) *int64 { return &j.Resources.MemPerNode }, func(r *acct.Record) *int64 { return &r.MemPerNode }),
	same("walltime", func(j *api.Job) *time.Duration { return &j.Resources.Walltime }, func(r *acct.Record) *time.Duration { return &r.Walltime }),
	{"allocs", // where its last run ran (finish keeps Allocs; a job that never ran has none)
		func(j *api.Job, r *acct.Record) {
			for _, a := range j.Allocs {
				r.Allocs = append(r.Allocs, acct.Alloc{Node: a.Node, GPUs: a.GPUs})
			}
		},
		func(r *acct.Record, j *api.Job) {
			for _, a := range r.Allocs {
				j.Allocs = append(j.Allocs, api.Alloc{Node: a.Node, GPUs: a.GPUs})
			}
		}},
	same("submit", func(j *api.Job) *time.Time { return &j.SubmitTime }, func(r *acct.Record) *time.Time { return &r.Submit }),
	same("eligible", func(j *api.Job) *time.Time { return &j.Acct.Eligible }, func(r *acct.Record) *time.Time { return &r.Eligible }),
	same("start", func(j *api.Job) *time.Time { return &j.StartTime }, func(r *acct.Record) *time.Time { return &r.Start }),
	same("end", func(j *api.Job) *time.Time { return &j.EndTime }, func(r *acct.Record) *time.Time { return &r.End }),
	same("used", func(j *api.Job) *time.Duration { return &j.Used }, func(r *acct.Record) *time.Duration { return &r.Used }),
	same("runs", func(j *api.Job) *int { return &j.Runs }, func(r *acct.Record) *int { return &r.Runs }),
	same("preemptions", func(j *api.Job) *int { return &j.Preemptions }, func(r *acct.Record) *int { return &r.Preemptions }),
	same("exit status", func(j *api.Job) **int { return &j.ExitStatus }, func(r *acct.Record) **int { return &r.ExitStatus }),
	{"outcome",
		func(j *api.Job, r *acct.Record) { r.Outcome = acct.Outcome(outcome(j)) },
		func(r *acct.Record, j *api.Job) { j.Outcome = api.Outcome(r.Outcome) }},
	same("reason", func(j *api.Job) *string { return &j.Reason }, func(r *acct.Record) *string { return &r.Reason }),
	same("owned", func(j *api.Job) *float64 { return &j.Acct.Owned }, func(r *acct.Record) *float64 { return &r.OwnedGPUSeconds }),
	same("borrowed", func(j *api.Job) *float64 { return &j.Acct.Borrowed }, func(r *acct.Record) *float64 { return &r.BorrowedGPUSeconds }),
	same("lost", func(j *api.Job) *float64 { return &j.Acct.Lost }, func(r *acct.Record) *float64 { return &r.LostGPUSeconds }),
	same("grace", func(j *api.Job) *float64 { return &j.Acct.Grace }, func(r *acct.Record) *float64 { return &r.GraceGPUSeconds }),

	// What the job was (acct.Detail), so that qstat -x shows a purged job as
	// it showed the live one; the readers redact it as they redact a live
	// job (script, command, shell and environment: owner and admins only).
	// Lists and maps are copied: the record is written off the loop.
	same("script", func(j *api.Job) *string { return &j.Script }, func(r *acct.Record) *string { return &r.Detail.Script }),
	same("shell", func(j *api.Job) *string { return &j.Shell }, func(r *acct.Record) *string { return &r.Detail.Shell }),
	{"command",
		func(j *api.Job, r *acct.Record) { r.Detail.Command = slices.Clone(j.Command) },
		func(r *acct.Record, j *api.Job) { j.Command = r.Detail.Command }},
	{"env",
		func(j *api.Job, r *acct.Record) { r.Detail.Env = maps.Clone(j.Env) },
		func(r *acct.Record, j *api.Job) { j.Env = r.Detail.Env }},
	{"deps", // written as the wire writes them; a record's unreadable type drops that dependency
		func(j *api.Job, r *acct.Record) {
			for _, d := range j.Deps {
				r.Detail.Deps = append(r.Detail.Deps, acct.Dep{Type: d.Type.String(), On: d.On})
			}
		},
		func(r *acct.Record, j *api.Job) {
			for _, d := range r.Detail.Deps {
				if t, err := jobid.ParseDepType(d.Type); err == nil {
					j.Deps = append(j.Deps, api.Dep{Type: t, On: d.On})
				}
			}
		}},
	{"history",
		func(j *api.Job, r *acct.Record) {
			for _, h := range j.History {
				r.Detail.Events = append(r.Detail.Events, acct.Event{Time: h.Time, State: string(h.State), What: h.What})
			}
		},
		func(r *acct.Record, j *api.Job) {
			for _, e := range r.Detail.Events {
				j.History = append(j.History, api.HistoryEntry{Time: e.Time, State: api.State(e.State), What: e.What})
			}
		}},
	same("workdir", func(j *api.Job) *string { return &j.WorkDir }, func(r *acct.Record) *string { return &r.Detail.WorkDir }),
	same("stdout", func(j *api.Job) *string { return &j.Stdout }, func(r *acct.Record) *string { return &r.Detail.Stdout }),
	same("stderr", func(j *api.Job) *string { return &j.Stderr }, func(r *acct.Record) *string { return &r.Detail.Stderr }),
	same("join", func(j *api.Job) *string { return &j.Join }, func(r *acct.Record) *string { return &r.Detail.Join }),
	same("umask", func(j *api.Job) *string { return &j.Umask }, func(r *acct.Record) *string { return &r.Detail.Umask }),
	same("image", func(j *api.Job) *string { return &j.Image }, func(r *acct.Record) *string { return &r.Detail.Image }),
	same("checkpoint grace", func(j *api.Job) *time.Duration { return &j.Grace }, func(r *acct.Record) *time.Duration { return &r.Detail.Grace }),
	same("not before", func(j *api.Job) *time.Time { return &j.NotBefore }, func(r *acct.Record) *time.Time { return &r.Detail.NotBefore }),
	same("interactive", func(j *api.Job) *bool { return &j.Interactive }, func(r *acct.Record) *bool { return &r.Detail.Interactive }),
	same("priority", func(j *api.Job) *int { return &j.Priority }, func(r *acct.Record) *int { return &r.Detail.Priority }),
	same("pbs priority", func(j *api.Job) *int { return &j.PBSPriority }, func(r *acct.Record) *int { return &r.Detail.PBSPriority }),
	same("array max", func(j *api.Job) *int { return &j.ArrayMax }, func(r *acct.Record) *int { return &r.Detail.ArrayMax }),
	{"labels",
		func(j *api.Job, r *acct.Record) { r.Detail.Labels = maps.Clone(j.Resources.Labels) },
		func(r *acct.Record, j *api.Job) { j.Resources.Labels = r.Detail.Labels }},
	same("exclusive", func(j *api.Job) *bool { return &j.Resources.Exclusive }, func(r *acct.Record) *bool { return &r.Detail.Exclusive }),
	same("mpiprocs", func(j *api.Job) *int { return &j.Resources.MPIProcs }, func(r *acct.Record) *int { return &r.Detail.MPIProcs }),
	same("group", func(j *api.Job) *string { return &j.Resources.Group }, func(r *acct.Record) *string { return &r.Detail.Group }),
	same("group_preferred", func(j *api.Job) *bool { return &j.Resources.GroupPreferred }, func(r *acct.Record) *bool { return &r.Detail.GroupPreferred }),
	same("group_wait", func(j *api.Job) *time.Duration { return &j.Resources.GroupWait }, func(r *acct.Record) *time.Duration { return &r.Detail.GroupWait }),
	{"domains", // copied: the record is written after the loop goes on
		func(j *api.Job, r *acct.Record) { r.Detail.Domains = slices.Clone(j.Domains) },
		func(r *acct.Record, j *api.Job) { j.Domains = slices.Clone(r.Detail.Domains) }},
	same("ompthreads", func(j *api.Job) *int { return &j.Resources.OMPThreads }, func(r *acct.Record) *int { return &r.Detail.OMPThreads }),
	same("node failures", func(j *api.Job) *int { return &j.NodeFailures }, func(r *acct.Record) *int { return &r.Detail.NodeFailures }),
	{"gpu use", // the last run's, summarised when it finished (api.SummarizeGPUUse)
		func(j *api.Job, r *acct.Record) {
			if u := j.GPURun; u != nil {
				r.GPUMeanUtil, r.GPUPeakMem = u.MeanUtil, u.PeakMemBytes
				r.SampledGPUSeconds, r.IdleGPUSeconds, r.UtilGPUSeconds = u.SampledGPUSeconds, u.IdleGPUSeconds, u.UtilGPUSeconds
			}
		},
		func(r *acct.Record, j *api.Job) {
			u := api.GPURun{MeanUtil: r.GPUMeanUtil, PeakMemBytes: r.GPUPeakMem, SampledGPUSeconds: r.SampledGPUSeconds,
				IdleGPUSeconds: r.IdleGPUSeconds, UtilGPUSeconds: r.UtilGPUSeconds}
			if u != (api.GPURun{}) {
				j.GPURun = &u
			}
		}},
}

// outcome is how j ended. A job finished before the controller recorded
// outcomes (a spool written by an older release, replayed into the
// history) has none: it is worked out as that release did.
func outcome(j *api.Job) api.Outcome {
	switch {
	case j.Outcome != api.OutcomeNone:
		return j.Outcome
	case j.Reason == "Deleted":
		return api.OutcomeDeleted
	}
	return api.ExitOutcome(j.ExitStatus)
}

// historyRecord is the finished job's history record.
func historyRecord(j *api.Job) acct.Record {
	var r acct.Record
	for _, f := range historyFields {
		f.toRecord(j, &r)
	}
	if len(r.Name) > acct.MaxNameLen {
		r.Name = r.Name[:acct.MaxNameLen]
	}
	if len(r.Reason) > acct.MaxTextLen {
		r.Reason = r.Reason[:acct.MaxTextLen]
	}
	fitDetail(&r.Detail)
	return r
}

// fitDetail keeps d within the history's bounds, which are those of the
// job's spool record (acct.MaxDetailLen is spool.MaxRecordSize; job.history
// keeps 201 events; submit and qalter check the counts and that the
// script is text), so that a job the spool held loses nothing. Should a
// record from an older release not fit, its accounting is still written:
// the event log keeps its first and latest entries, and the largest parts
// (script, then environment, then command and labels, then events and
// dependencies) go.
func fitDetail(d *acct.Detail) {
	if !utf8.ValidString(d.Script) || strings.IndexByte(d.Script, 0) >= 0 {
		d.Script = strings.ToValidUTF8(strings.ReplaceAll(d.Script, "\x00", ""), "\uFFFD")
	}
	if n := len(d.Events); n > acct.MaxEvents {
		d.Events = append(d.Events[:1:1], d.Events[n-acct.MaxEvents+1:]...)
	}
	if len(d.Deps) > acct.MaxDeps {
		d.Deps = d.Deps[:acct.MaxDeps]
	}
	if d.Len() > acct.MaxDetailLen {
		d.Script = ""
	}
	if len(d.Env) > acct.MaxEnvVars || d.Len() > acct.MaxDetailLen {
		d.Env = nil
	}
	if len(d.Command) > acct.MaxArgs || len(d.Labels) > acct.MaxLabels || d.Len() > acct.MaxDetailLen {
		d.Command, d.Labels = nil, nil
	}
	if d.Len() > acct.MaxDetailLen { // what is left are bounded paths, events and dependencies
		d.Events, d.Deps = nil, nil
	}
}

// apiJob turns a history record back into the job qstat shows.
func apiJob(r acct.Record) api.Job {
	j := api.Job{State: api.StateFinished, Acct: api.Usage{Recorded: true}}
	for _, f := range historyFields {
		f.toJob(&r, &j)
	}
	return j
}
