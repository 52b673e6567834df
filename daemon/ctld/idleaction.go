package ctld

import (
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// What the idle policy shows and does once it marks a job IdleGPUs
// (idle.go):
//
//   - The job's Reason is api.ReasonIdleGPUs while it stays idle (qstat -a's
//     Reason column, qstat -f's comment), unless it has another one (its
//     node unreachable); the sessions of an interactive job are told on
//     their terminal (api.MsgNotice).
//   - With the partition's idle_action, the job is stopped as a preemption
//     stops it (SIGTERM, its grace, SIGKILL): "requeue" puts it back in its
//     queue once it has exited, not counted as a preemption; "stop" ends it
//     as qdel does. An interactive job, whose session cannot come back, is
//     stopped under either.
//   - The action is taken only on a job that borrows or is interactive. A
//     job borrows when its share holds at least the job's GPUs beyond its
//     quota: stopping it leaves the share at or over its quota, so no GPU
//     within the quota is ever taken from a share. A batch job within its
//     share's quota is only marked, unless the partition sets
//     idle_action_in_quota = true. The check is made at each report of the
//     job's nodes while it stays idle, so a job that starts borrowing
//     later (another job of its share started) is acted on then.

// idleNotice tells the sessions of an interactive job that it was marked
// IdleGPUs, and what comes of it.
func (c *Controller) idleNotice(j *job, p *conf.Partition, act bool) {
	if !j.Interactive || len(j.Allocs) == 0 {
		return
	}
	text := fmt.Sprintf("job %s: its GPUs stayed below %g%% use for %v: marked IdleGPUs", j.ID, c.idleThreshold(j), p.IdleAfter)
	if act {
		text += ": it is stopped now (idle_action)"
	} else {
		text += ": other jobs may take its GPUs first"
	}
	for _, a := range j.Allocs {
		if q := j.parts[a.Node]; q != nil && q.exited {
			continue
		}
		c.sendNode(a.Node, api.NodeMsg{Type: api.MsgNotice, Notice: &api.NoticeOrder{JobID: j.ID, Run: j.Runs - 1, Text: text}})
	}
}

// idleActs says whether the partition's idle_action applies to j now.
func (c *Controller) idleActs(j *job, p *conf.Partition) bool {
	if p == nil || p.IdleAction == conf.IdleActionNone || j.State != api.StateRunning || j.Stopping != "" {
		return false
	}
	return j.Interactive || p.IdleActionInQuota || c.borrows(j)
}

// borrows says whether j's share holds at least j's GPUs beyond its quota.
func (c *Controller) borrows(j *job) bool {
	gpus := 0
	for _, a := range j.Allocs {
		gpus += len(a.GPUs)
	}
	if gpus == 0 {
		return false
	}
	for _, u := range c.core.Shares() {
		if u.Share == j.Share {
			return u.Borrowed >= gpus
		}
	}
	return false
}

// idleAct stops the idle job j as its partition's idle_action says.
func (c *Controller) idleAct(j *job, p *conf.Partition, now time.Time) {
	grace := c.grace(j)
	why := fmt.Sprintf("its GPUs stayed below %g%% use for %v (IdleGPUs)", c.idleThreshold(j), p.IdleAfter)
	c.log.Info("idle job stopped (idle_action)", "job", j.ID, "share", j.Share, "action", p.IdleAction)
	c.met.idleStops.WithLabelValues(j.Share, string(p.IdleAction)).Inc()
	if p.IdleAction == conf.IdleActionRequeue && !j.Interactive {
		j.Stopping, j.State, j.RerunWhy = string(api.StopRerun), api.StateExiting, why
		j.history(now, fmt.Sprintf("idle_action requeue: %s: stopping (SIGTERM, SIGKILL after %v), then back to the queue, not counted as a preemption", why, grace))
		c.markDirty(j.ID)
		c.stopJobWithin(j, api.StopRerun, grace)
		return
	}
	if err := c.core.Apply(sched.Cancelled{ID: sched.JobID(j.ID)}); err != nil {
		c.log.Error("idle stop", "job", j.ID, "err", err)
		return
	}
	j.Stopping, j.State = string(api.StopDeleted), api.StateExiting
	j.history(now, fmt.Sprintf("idle_action %s: %s: stopping for good (SIGTERM, SIGKILL after %v)", p.IdleAction, why, grace))
	c.markDirty(j.ID)
	c.stopJobWithin(j, api.StopDeleted, grace)
	c.needPass = true
}
