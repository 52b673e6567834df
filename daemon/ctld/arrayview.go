package ctld

import (
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/jobid"
)

// arrayView is what qstat shows of array jobs beyond their records: the
// subjobs that have not started yet (the controller keeps a record only
// once a subjob starts) and each array's state counts.
type arrayView struct {
	c    *Controller
	subs map[string][]*job // array id -> its subjobs' records
}

// newArrayView indexes the subjob records once for one qstat answer.
func (c *Controller) newArrayView() *arrayView {
	v := &arrayView{c: c, subs: map[string][]*job{}}
	for _, j := range c.jobs {
		if j.ArrayParent != "" {
			v.subs[j.ArrayParent] = append(v.subs[j.ArrayParent], j)
		}
	}
	return v
}

// records returns the array's subjob records.
func (v *arrayView) records(parent *job) []*job { return v.subs[parent.ID] }

// unstarted returns a record for each index of the array that never
// started, as qstat -t lists them: state Q (H or W as their array), with
// the array's pending reason. They are views, not kept.
func (v *arrayView) unstarted(parent *job) []*job {
	info, ok := v.c.core.Job(sched.JobID(parent.ID))
	if !ok || info.Job.Array == nil || len(info.Job.Array.Indices) == 0 {
		return nil
	}
	have := make(map[int]bool, len(v.subs[parent.ID]))
	for _, s := range v.subs[parent.ID] {
		have[s.ArrayIndex] = true
	}
	state := api.StateQueued
	switch parent.State {
	case api.StateHeld, api.StateWaiting:
		state = parent.State
	}
	reason := ""
	if info.State == sched.Pending && info.Reason != sched.ReasonNone {
		reason = info.Reason.String()
	}
	out := make([]*job, 0, len(info.Job.Array.Indices))
	for _, i := range info.Job.Array.Indices {
		if have[i] {
			continue
		}
		j := newSubjob(parent, jobid.SubOf(parent.ID, i), i)
		j.State, j.Reason = state, reason
		j.Used, j.EndTime, j.ExitStatus, j.Allocs = 0, time.Time{}, nil, nil
		out = append(out, j)
	}
	return out
}

// states counts the array's subjobs by state.
func (v *arrayView) states(parent *job) *api.ArrayStates {
	var st api.ArrayStates
	have := map[int]bool{}
	for _, s := range v.subs[parent.ID] {
		have[s.ArrayIndex] = true
		switch s.State {
		case api.StateRunning:
			st.Running++
		case api.StateExiting:
			st.Exiting++
		case api.StateFinished:
			st.Expired++
		default:
			st.Queued++
		}
	}
	if info, ok := v.c.core.Job(sched.JobID(parent.ID)); ok && info.Job.Array != nil {
		for _, i := range info.Job.Array.Indices {
			if !have[i] {
				st.Queued++
			}
		}
	}
	return &st
}
