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
	for _, s := range req.IDs {
		jobs, e := c.lookup(s)
		if e != nil {
			resp.Errors = append(resp.Errors, *e)
			continue
		}
		jobs = c.withSubjobs(jobs)
		sent := 0
		var refused []api.Error
		for _, j := range jobs {
			if !c.mayTouch(id, j) {
				resp.Errors = append(resp.Errors, api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + j.ID, ID: j.ID})
				continue
			}
			if j.State != api.StateRunning || j.Stopping != "" {
				refused = append(refused, api.Error{Code: api.CodeInvalidState,
					Message: fmt.Sprintf("it is %s: only a running job can be signalled", stateWord(j)), ID: j.ID})
				continue
			}
			for _, a := range j.Allocs {
				if p := j.parts[a.Node]; p != nil && p.exited {
					continue
				}
				c.sendNode(a.Node, api.NodeMsg{Type: api.MsgSignal, Signal: &api.SignalOrder{JobID: j.ID, Run: j.Runs - 1, Signal: req.Signal}})
			}
			j.history(now, fmt.Sprintf("signal %s sent by %s", req.Signal, id.User))
			c.markDirty(j.ID)
			sent++
		}
		if sent == 0 || len(jobs) == 1 {
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
		if j.ArrayIndices == "" || j.ArrayParent != "" {
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
