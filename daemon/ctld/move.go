package ctld

import (
	"fmt"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// moveJobs is qmove: each job that waits (queued, held or waiting for its
// start time, an array none of whose subjobs has started) goes to share
// req.Share (SHARE or SHARE@SERVER) of its partition, at the place its
// priorities and submission give it there. The owner or an admin may
// move a job; the job's owner must be one of the share's users (an admin
// may move any job to any share), the share must take jobs, the job must
// be able to run there (its quota) and fit the owner's
// max_queued_jobs_per_user there. A running or finished job, or a subjob,
// is refused with PBS's invalid-state error.
func (c *Controller) moveJobs(id Identity, req *api.Request, resp *api.Response) {
	if len(req.IDs) == 0 {
		resp.Error = badRequest("no job id given")
		return
	}
	name, server, _ := strings.Cut(req.Share, "@")
	if !c.isThisServer(server) {
		resp.Error = badRequest(fmt.Sprintf("queue %q is on server %q, not on this cluster (%s)", req.Share, server, c.cfg.Cluster.Name))
		return
	}
	sh := c.cfg.Share(name)
	if sh == nil {
		resp.Error = badRequest(fmt.Sprintf("Unknown queue %.64q; shares: %s", name, strings.Join(c.shareNames(), ", ")))
		return
	}
	for _, s := range req.IDs {
		jobs, e := c.lookup(s)
		if e != nil {
			resp.Errors = append(resp.Errors, *e)
			continue
		}
		for _, j := range jobs {
			if e := c.move(id, j, sh.Name); e != nil {
				resp.Errors = append(resp.Errors, *e)
			}
		}
	}
}

// move moves one job; see moveJobs.
func (c *Controller) move(id Identity, j *job, dest string) *api.Error {
	invalid := func(why string) *api.Error {
		return &api.Error{Code: api.CodeInvalidState, Message: why, ID: j.ID}
	}
	if !c.mayTouch(id, j) {
		return &api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + j.ID, ID: j.ID}
	}
	switch {
	case j.running() || j.finished():
		return invalid(fmt.Sprintf("it is %s: only a job that waits can be moved", stateWord(j)))
	case j.ArrayParent != "":
		return invalid("a subjob moves with its array")
	case j.State == api.StateArray || j.arrayBegun():
		return invalid("some of its subjobs have started: an array moves only before")
	}
	if dest == j.Share {
		return nil
	}
	sh, old := c.cfg.Share(dest), c.cfg.Share(j.Share)
	admin := c.auth.isAdmin(id)
	owner := Identity{UID: j.Owner.UID, GID: j.Owner.GID, Groups: j.Owner.Groups, User: j.Owner.User}
	switch {
	case !sh.Enabled:
		return invalid(fmt.Sprintf("queue %q is disabled: it takes no new jobs", dest))
	case !admin && !c.auth.shares[sh.Name].admits(owner):
		return &api.Error{Code: api.CodePermission, Message: fmt.Sprintf("user %s may not submit to queue %q", j.Owner.User, dest), ID: j.ID}
	case sh.Partition != j.Partition:
		return badRequest(fmt.Sprintf("queue %q is in partition %s, job %s's in %s: a job moves only within its partition (qdel it and qsub it there)", dest, sh.Partition, j.ID, j.Partition))
	}
	// Its sharq priority: the new share's default where it had its old
	// share's; one above the new default only if an admin moves it.
	prio := j.Priority
	if old != nil && prio == old.PriorityDefault || prio > sh.PriorityDefault && !admin {
		prio = sh.PriorityDefault
	}
	moved := *j
	moved.Share, moved.Priority = dest, prio
	if e := c.checkCanRun(&moved); e != nil {
		e.ID = j.ID
		return e
	}
	if j.charged > 0 {
		if e := c.checkQueued(j.Owner.UID, j.Owner.User, &moved.Job); e != nil {
			e.ID = j.ID
			return e
		}
	}
	if err := c.core.Apply(sched.Moved{ID: sched.JobID(j.ID), Share: dest, Priority: prio, Order: j.PBSPriority}); err != nil {
		return coreError(j.ID, err)
	}
	if j.charged > 0 {
		k := userShare{j.Owner.UID, j.Share}
		if c.userJobs[k] -= j.queued; c.userJobs[k] <= 0 {
			delete(c.userJobs, k)
		}
		c.userJobs[userShare{j.Owner.UID, dest}] += j.queued
	}
	j.history(c.now(), fmt.Sprintf("moved from %s to %s by %s", j.Share, dest, id.User))
	j.Share, j.Priority = dest, prio
	// A system hold (the job could never run in its old share) is the
	// core's to lift: it has, if the job fits the new share.
	if info, ok := c.core.Job(sched.JobID(j.ID)); ok && holdLetters(info.Job.Hold) != j.Hold {
		j.Hold = holdLetters(info.Job.Hold)
		if j.Hold == "" && j.State == api.StateHeld {
			j.State = pendingState(j, sched.ReasonNone)
		}
	}
	c.markDirty(j.ID)
	c.needPass = true
	return nil
}
