package ctld

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sharq-hpc/sharq/api"
)

// signalJobs is qsig: it orders every node of each running job to send
// req.Signal to the job's processes. The owner or an admin may; a job that
// is not running (queued, held, finished, or already stopping) is refused
// with PBS's invalid-state error. A range of subjobs signals those of them
// that run, and is refused only when none does.
func (c *Controller) signalJobs(id Identity, req *api.Request, resp *api.Response) {
	if len(req.IDs) == 0 {
		resp.Error = badRequest("no job id given")
		return
	}
	if req.Signal.Number() == 0 {
		resp.Error = badRequest("qsig: no signal given")
		return
	}
	now := c.now()
	c.forRunning(id, req.IDs, resp, func(j *job) string {
		if j.State != api.StateRunning || j.Stopping != "" {
			return fmt.Sprintf("it is %s: only a running job can be signalled", stateWord(j))
		}
		for _, a := range j.Allocs {
			if p := j.parts[a.Node]; p != nil && p.exited {
				continue
			}
			c.sendNode(a.Node, api.NodeMsg{Type: api.MsgSignal, Signal: &api.SignalOrder{JobID: j.ID, Run: j.Runs - 1, Signal: req.Signal}})
		}
		j.history(now, fmt.Sprintf("signal %s sent by %s", req.Signal, id.User))
		c.markDirty(j.ID)
		return ""
	})
}

// forRunning is qsig's and qrerun's walk over their job ids: each looked
// up (an array as its started subjobs, withSubjobs), the caller's right
// checked (mayTouch), then act on the job, which returns why it refuses
// it ("" when it acted). The refusals of an id are answered when act took
// none of its jobs, or when the id named one job: a range acts on those
// of its subjobs that run.
func (c *Controller) forRunning(id Identity, ids []string, resp *api.Response, act func(j *job) (refused string)) {
	for _, s := range ids {
		jobs, e := c.lookup(s)
		if e != nil {
			resp.Errors = append(resp.Errors, *e)
			continue
		}
		jobs = c.withSubjobs(jobs)
		done := 0
		var refused []api.Error
		for _, j := range jobs {
			if !c.mayTouch(id, j) {
				resp.Errors = append(resp.Errors, api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + j.ID, ID: j.ID})
				continue
			}
			if why := act(j); why != "" {
				refused = append(refused, api.Error{Code: api.CodeInvalidState, Message: why, ID: j.ID})
				continue
			}
			done++
		}
		if done == 0 || len(jobs) == 1 {
			resp.Errors = append(resp.Errors, refused...)
		}
	}
}

// withSubjobs replaces each array in jobs by its subjobs that have started
// (a record of their own): qsig and qrerun of ID[] act on those. An
// array none of whose subjobs has started stays, to be refused.
func (c *Controller) withSubjobs(jobs []*job) []*job {
	var out []*job
	for _, j := range jobs {
		if j.ArrayIndices.IsZero() || j.ArrayParent != "" {
			out = append(out, j)
			continue
		}
		n := len(out)
		for _, sj := range c.jobs {
			if sj.ArrayParent == j.ID {
				out = append(out, sj)
			}
		}
		if len(out) == n {
			out = append(out, j)
		}
		slices.SortFunc(out[n:], func(a, b *job) int { return strings.Compare(a.ID, b.ID) })
	}
	return out
}

// stateWord names a job's state for a refusal.
func stateWord(j *job) string {
	switch {
	case j.Stopping != "":
		return "stopping (" + j.Stopping + ")"
	case j.finished():
		return "finished"
	case j.State == api.StateHeld:
		return "held"
	case j.State == api.StateRunning:
		return "running"
	}
	return "queued"
}
