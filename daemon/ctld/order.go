package ctld

import (
	"fmt"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// orderJobs is qorder: two waiting jobs of one share exchange their places
// in its queue, each taking the other's sharq priority, PBS priority and
// place in submission order (sched.Swapped). The caller must be allowed to
// touch both (owner or admin); exchanging jobs of different sharq
// priorities is an admin's, since it moves a priority only an admin
// grants. Arrays, subjobs and jobs that do not wait are refused with
// PBS's invalid-state error.
func (c *Controller) orderJobs(id Identity, req *api.Request) *api.Error {
	if len(req.IDs) != 2 {
		return badRequest(fmt.Sprintf("qorder takes two job ids, not %d", len(req.IDs)))
	}
	var pair [2]*job
	for i, s := range req.IDs {
		jobs, e := c.lookup(s)
		if e != nil {
			return e
		}
		if len(jobs) != 1 {
			return badRequest(fmt.Sprintf("qorder: %.64s is not one job", s))
		}
		j := jobs[0]
		if !c.mayTouch(id, j) {
			return &api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + j.ID, ID: j.ID}
		}
		invalid := ""
		switch {
		case j.running() || j.finished():
			invalid = fmt.Sprintf("it is %s: only jobs that wait can be reordered", stateWord(j))
		case j.ArrayParent != "" || !j.ArrayIndices.IsZero():
			invalid = "an array or a subjob cannot be reordered"
		}
		if invalid != "" {
			return &api.Error{Code: api.CodeInvalidState, Message: invalid, ID: j.ID}
		}
		pair[i] = j
	}
	a, b := pair[0], pair[1]
	switch {
	case a == b:
		return badRequest("qorder: " + a.ID + " given twice")
	case a.Share != b.Share:
		return &api.Error{Code: api.CodeInvalidState, ID: b.ID,
			Message: fmt.Sprintf("%s is in share %s, %s in %s: qorder reorders the jobs of one share", a.ID, a.Share, b.ID, b.Share)}
	case a.Priority != b.Priority && !c.auth.isAdmin(id):
		return &api.Error{Code: api.CodePermission, ID: b.ID,
			Message: fmt.Sprintf("%s and %s have different sharq priorities (%d and %d): only an admin may exchange them", a.ID, b.ID, a.Priority, b.Priority)}
	}
	if err := c.core.Apply(sched.Swapped{A: sched.JobID(a.ID), B: sched.JobID(b.ID)}); err != nil {
		return coreError(a.ID, err)
	}
	place := func(j *job) uint64 {
		if j.QueuePlace != 0 {
			return j.QueuePlace
		}
		return j.Seq
	}
	pa, pb := place(a), place(b)
	a.Priority, b.Priority = b.Priority, a.Priority
	a.PBSPriority, b.PBSPriority = b.PBSPriority, a.PBSPriority
	a.QueuePlace, b.QueuePlace = pb, pa
	now := c.now()
	a.history(now, fmt.Sprintf("place exchanged with %s by %s (qorder)", b.ID, id.User))
	b.history(now, fmt.Sprintf("place exchanged with %s by %s (qorder)", a.ID, id.User))
	c.markDirty(a.ID)
	c.markDirty(b.ID)
	c.needPass = true
	return nil
}
