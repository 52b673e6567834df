package ctld

import (
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// rerunJobs is qrerun: each running job is stopped as a preemption stops
// it (SIGTERM, its grace, SIGKILL: a job that checkpoints on SIGTERM
// checkpoints) and, once every part has exited, goes back to its queue at
// its place (rerunExited) without counting a preemption. The owner or an
// admin may; a job that is not running, is already stopping, or is
// interactive (its session cannot come back) is refused with PBS's
// invalid-state error. A range of subjobs reruns those that run.
func (c *Controller) rerunJobs(id Identity, req *api.Request, resp *api.Response) {
	if len(req.IDs) == 0 {
		resp.Error = badRequest("no job id given")
		return
	}
	now := c.now()
	c.forRunning(id, req.IDs, resp, func(j *job) string {
		switch {
		case j.State != api.StateRunning || j.Stopping != "":
			return fmt.Sprintf("it is %s: only a running job can be rerun", stateWord(j))
		case j.Interactive:
			return "an interactive job cannot be rerun (its session would not come back): qdel it"
		}
		grace := c.grace(j)
		j.Stopping, j.State = string(api.StopRerun), api.StateExiting
		j.history(now, fmt.Sprintf("rerun by %s: stopping (SIGTERM, SIGKILL after %v), then back to the queue", id.User, grace))
		c.markDirty(j.ID)
		c.stopJobWithin(j, api.StopRerun, grace)
		return ""
	})
}

// rerunExited puts a job that qrerun stopped back in its queue once every
// part has exited: the core requeues it at its place, its preemption
// count unchanged.
func (c *Controller) rerunExited(j *job, now time.Time) {
	why := "rerun (qrerun)"
	if j.RerunWhy != "" {
		why = "rerun: " + j.RerunWhy
	}
	c.lostJob(j, now, fmt.Sprintf("%s, exit status %d", why, j.exitStatus()), false)
}
