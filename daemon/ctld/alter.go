package ctld

import (
	"fmt"
	"slices"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/jobid"
)

// alter applies qalter / sharqctl job priority. It is all or nothing:
// every change is checked before any is made, and the core hears of them
// in one event, so a refused alter changes nothing, in memory or on disk.
//
// Long: its two steps (check every field and compute the new values, then
// apply them) share a dozen locals; split, each half would take or return
// all of them.
func (c *Controller) alter(id Identity, a *api.AlterSpec) *api.Error {
	if a == nil {
		return badRequest("alter: nothing to change")
	}
	jobs, e := c.lookup(a.ID)
	if e != nil {
		return e
	}
	if len(jobs) != 1 {
		return badRequest("alter: give one job, not a range: " + a.ID)
	}
	j := jobs[0]
	if !c.mayTouch(id, j) {
		return &api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + j.ID, ID: j.ID}
	}
	if j.finished() {
		return &api.Error{Code: api.CodeInvalidState, Message: "Request invalid for state of job " + j.ID, ID: j.ID}
	}
	admin := c.auth.isAdmin(id)
	bad := func(msg string) *api.Error { return &api.Error{Code: api.CodeBadRequest, Message: msg, ID: j.ID} }

	// 1. Check everything and compute the new values.
	pendingOnly := a.Walltime != nil || a.Deps != nil || a.NotBefore != nil || a.Name != nil
	if pendingOnly && j.running() {
		return &api.Error{Code: api.CodeInvalidState, Message: "only the priority of a running job can change: " + j.ID, ID: j.ID}
	}
	prio, order := j.Priority, j.PBSPriority
	if a.PBSPriority != nil {
		if a.Priority != nil {
			return bad("alter: priority given on both scales")
		}
		if err := checkPBSPriority(*a.PBSPriority); err != nil {
			return bad(err.Error())
		}
		order = *a.PBSPriority
	} else if a.Priority != nil {
		prio = *a.Priority
		if prio < 0 || prio > maxPriority {
			return bad(fmt.Sprintf("priority %d is outside 0..%d", prio, maxPriority))
		}
	}
	if sh := c.cfg.Share(j.Share); prio != j.Priority && !admin && sh != nil && prio > sh.PriorityDefault && prio > j.Priority {
		return &api.Error{Code: api.CodePermission, Message: aboveDefault(prio, sh), ID: j.ID}
	}
	walltime := j.Resources.Walltime
	if a.Walltime != nil {
		p := c.cfg.Partition(j.Partition)
		if *a.Walltime < 0 || (p != nil && p.MaxWalltime > 0 && *a.Walltime > p.MaxWalltime) {
			return bad(fmt.Sprintf("walltime %v exceeds max_walltime", *a.Walltime))
		}
		walltime = *a.Walltime
	}
	name := j.Name
	if a.Name != nil {
		if err := checkName(*a.Name); err != nil {
			return bad(err.Error())
		}
		name = *a.Name
	}
	deps, nb := j.Deps, j.NotBefore
	var sdeps []sched.Dep
	if a.Deps != nil {
		if err := checkDeps(*a.Deps); err != nil {
			return bad(err.Error())
		}
		deps = slices.Clone(*a.Deps)
		for i := range deps {
			deps[i].On = c.normalizeID(deps[i].On)
			if deps[i].On == j.ID || c.dependsOn(deps[i].On, j.ID) {
				return bad(fmt.Sprintf("dependency on %s would make a cycle", deps[i].On))
			}
		}
	}
	if a.NotBefore != nil {
		if y := a.NotBefore.Year(); !a.NotBefore.IsZero() && (y < 1970 || y > 9999) {
			return bad(fmt.Sprintf("start time %v is out of range", *a.NotBefore))
		}
		nb = *a.NotBefore
	}
	for _, d := range deps {
		sdeps = append(sdeps, sched.Dep{Type: d.Type, On: sched.JobID(d.On)})
	}

	if a.Name != nil || a.Deps != nil {
		after := j.Job
		after.Name, after.Deps = name, deps
		if e := c.checkRecharge(j, jobBytes(&after)); e != nil {
			return e
		}
	}

	// 2. One event to the core; if it refuses, nothing has changed.
	var ev sched.Event
	switch {
	case a.Deps != nil || a.NotBefore != nil || a.Walltime != nil:
		ev = sched.JobAltered{ID: sched.JobID(j.ID), Priority: prio, Order: order, NotBefore: nb, Deps: sdeps, Walltime: walltime}
	case prio != j.Priority || order != j.PBSPriority:
		ev = sched.PriorityChanged{ID: sched.JobID(j.ID), Priority: prio, Order: order}
	}
	if ev != nil {
		if err := c.core.Apply(ev); err != nil {
			return coreError(j.ID, err)
		}
	}

	// 3. The record.
	now := c.now()
	if prio != j.Priority {
		j.history(now, fmt.Sprintf("sharq priority set to %d by %s", prio, id.User))
	}
	if order != j.PBSPriority {
		j.history(now, fmt.Sprintf("Priority set to %d by %s", order, id.User))
	}
	if a.Deps != nil || a.NotBefore != nil {
		j.history(now, "dependencies or start time changed by "+id.User)
	}
	j.Priority, j.PBSPriority, j.Resources.Walltime, j.Name, j.Deps, j.NotBefore = prio, order, walltime, name, deps, nb
	c.recharge(j)
	c.markDirty(j.ID)
	c.needPass = true
	return nil
}

// dependsOn reports whether job from depends, directly or not, on to.
func (c *Controller) dependsOn(from, to string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id == to {
			return true
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		if j := c.jobs[id]; j != nil {
			for _, d := range j.Deps {
				stack = append(stack, d.On)
			}
		}
		if arr, _, ok := jobid.SplitSub(id); ok {
			stack = append(stack, arr) // a subjob (started or not) waits on what its array waits on
		}
	}
	return false
}
