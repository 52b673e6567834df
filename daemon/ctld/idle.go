package ctld

import (
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// The idle policy (per partition, off unless idle_after is set): a running
// job whose GPUs all stayed below idle_threshold percent use (default 5)
// for idle_after, on every node of the job, as its nodes sample them
// (gpuuse.go), is marked IdleGPUs: the core learns it (sched.JobIdle) and
// takes it before busy jobs whenever it preempts (an owner reclaiming
// lent GPUs takes idle borrowers first), and the job's history says so.
// A sample at or above the threshold marks it busy again. What the mark
// shows, and the partition's idle_action (off by default), which stops
// idle borrowing or interactive jobs, are in idleaction.go.

// idleThreshold is the use, in percent, below which j's GPUs count idle.
func (c *Controller) idleThreshold(j *job) float64 {
	if p := c.cfg.Partition(j.Partition); p != nil && p.IdleThreshold > 0 {
		return p.IdleThreshold
	}
	return conf.DefaultIdleThreshold
}

// checkIdle marks j idle or busy as its partition's policy and its nodes'
// reports say.
func (c *Controller) checkIdle(j *job, now time.Time) {
	p := c.cfg.Partition(j.Partition)
	idle := p != nil && p.IdleAfter > 0 && j.Resources.GPUsPerNode > 0 && len(j.Allocs) > 0
	for _, a := range j.Allocs {
		if !idle {
			break
		}
		n := c.nodes[a.Node]
		if n == nil {
			idle = false
			break
		}
		u := n.gpu.use[j.ID]
		idle = u != nil && !u.lowSince.IsZero() && now.Sub(u.lowSince) >= p.IdleAfter
	}
	if idle == c.core.Idle(sched.JobID(j.ID)) {
		switch {
		case idle && c.idleActs(j, p):
			c.idleAct(j, p, now)
		case !idle && j.Reason == api.ReasonIdleGPUs:
			// A mark spooled before a controller restart (the core's is
			// in memory): it comes back once the job is idle again.
			j.Reason = ""
			c.markDirty(j.ID)
		}
		return
	}
	if err := c.core.Apply(sched.JobIdle{ID: sched.JobID(j.ID), Idle: idle}); err != nil {
		c.log.Error("idle mark", "job", j.ID, "err", err)
		return
	}
	if idle {
		j.history(now, fmt.Sprintf("IdleGPUs: its GPUs stayed below %g%% use for %v: preemptions take it before busy jobs", c.idleThreshold(j), p.IdleAfter))
		c.log.Info("job marked IdleGPUs", "job", j.ID, "share", j.Share)
		if j.Reason == "" {
			j.Reason = api.ReasonIdleGPUs
		}
		act := c.idleActs(j, p)
		c.idleNotice(j, p, act)
		if act {
			c.idleAct(j, p, now)
		}
	} else {
		j.history(now, "its GPUs are busy again: no longer IdleGPUs")
		if j.Reason == api.ReasonIdleGPUs {
			j.Reason = ""
		}
	}
	c.markDirty(j.ID)
}
