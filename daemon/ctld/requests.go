package ctld

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/jobid"
)

// handle answers one client request. Everything that reads or changes state
// runs on the loop.
func (c *Controller) handle(ctx context.Context, id Identity, req *api.Request) *api.Response {
	if req.V != api.Version {
		return &api.Response{Error: badRequest(fmt.Sprintf("protocol version %d not supported (want %d): update the client", req.V, api.Version))}
	}
	resp := &api.Response{}
	var fn func()
	switch req.Op {
	case api.OpSubmit:
		fn = func() { resp.JobID, resp.Error = c.submit(id, req.Submit) }
	case api.OpStat:
		if req.Stat != nil && req.Stat.Finished && len(req.Stat.IDs) > 0 {
			return c.statHistory(ctx, id, req.Stat)
		}
		if req.Stat != nil && req.Stat.Finished {
			return c.statFinished(ctx, id, req.Stat)
		}
		fn = func() { c.stat(id, req.Stat, resp) }
	case api.OpDelete, api.OpHold, api.OpRelease:
		fn = func() { c.eachJob(id, req, resp) }
	case api.OpSignal:
		fn = func() { c.signalJobs(id, req, resp) }
	case api.OpRerun:
		fn = func() { c.rerunJobs(id, req, resp) }
	case api.OpMove:
		fn = func() { c.moveJobs(id, req, resp) }
	case api.OpOrder:
		fn = func() { resp.Error = c.orderJobs(id, req) }
	case api.OpAlter:
		fn = func() { resp.Error = c.alter(id, req.Alter) }
	case api.OpShares:
		fn = func() { resp.Shares = c.shareStatus() }
	case api.OpNodes:
		fn = func() { resp.Nodes = c.nodeStatus() }
	case api.OpConfig:
		fn = func() { resp.Text = c.cfgText }
	case api.OpDrain, api.OpResume:
		fn = func() { resp.Error = c.drain(id, req.Node, req.Op == api.OpDrain, req.Comment) }
	case api.OpComment:
		fn = func() { resp.Error = c.commentNode(id, req.Node, req.Comment) }
	case api.OpControllers:
		return c.controllers(ctx)
	case api.OpReconfigure:
		return c.reconfigure(ctx, id)
	case api.OpWait:
		return c.wait(ctx, id, req)
	case api.OpReport:
		return c.report(ctx, id, req.Report)
	case api.OpSession:
		fn = func() { resp.Session, resp.Error = c.session(id, req.Session) }
	default:
		return &api.Response{Error: badRequest(fmt.Sprintf("unknown operation %q", req.Op))}
	}
	if err := c.do(ctx, fn); err != nil {
		msg := err.Error()
		if ctx.Err() != nil {
			msg = "controller stopping: " + msg
		}
		return &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: msg}}
	}
	if resp.Error == nil && len(resp.Errors) > 0 {
		e := resp.Errors[0]
		resp.Error = &e
	}
	return resp
}

// normalizeID turns what a user typed ("12", "12[3]") into a full id.
func (c *Controller) normalizeID(s string) string {
	r, err := parseRef(s, c.cfg.Cluster.Name)
	if _, single := r.Single(); err != nil || !single {
		return s
	}
	return r.ID(c.cfg.Cluster.Name)
}

// lookup resolves user-typed ids (ranges expand) to jobs.
func (c *Controller) lookup(s string) ([]*job, *api.Error) {
	r, err := parseRef(s, c.cfg.Cluster.Name)
	if err != nil {
		return nil, &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id " + s, ID: s}
	}
	out := c.resolve(r)
	if len(out) == 0 {
		return nil, &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id " + s, ID: s}
	}
	return out, nil
}

// mayTouch: owners and admins only.
func (c *Controller) mayTouch(id Identity, j *job) bool {
	return j.Owner.UID == id.UID || c.auth.isAdmin(id)
}

// eachJob runs qdel, qhold or qrls on every id; failures are per id.
func (c *Controller) eachJob(id Identity, req *api.Request, resp *api.Response) {
	if len(req.IDs) == 0 {
		resp.Error = badRequest("no job id given")
		return
	}
	for _, s := range req.IDs {
		jobs, e := c.lookup(s)
		if e != nil && req.Op == api.OpDelete {
			jobs, e = c.unstartedSubjob(id, s)
		}
		if e != nil {
			resp.Errors = append(resp.Errors, *e)
			continue
		}
		for _, j := range jobs {
			if !c.mayTouch(id, j) {
				resp.Errors = append(resp.Errors, api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + j.ID, ID: j.ID})
				continue
			}
			var e *api.Error
			switch req.Op {
			case api.OpDelete:
				e = c.delete(id, j, req.Force)
			case api.OpHold:
				e = c.setHold(id, j, true)
			case api.OpRelease:
				e = c.setHold(id, j, false)
			}
			if e != nil {
				resp.Errors = append(resp.Errors, *e)
			}
		}
	}
}

// delete removes a pending job, or stops a running one (SIGTERM, grace, SIGKILL).
//
// A job that is already stopping (preempted, or deleted before) is ordered
// again to stop within the partition's preempt_grace, which shortens a long
// -W grace; an admin's qdel -W force (force) kills it at once (no grace).
func (c *Controller) delete(id Identity, j *job, force bool) *api.Error {
	now := c.now()
	if force && !c.auth.isAdmin(id) {
		return &api.Error{Code: api.CodePermission, Message: "qdel -W force is for admins: " + j.ID, ID: j.ID}
	}
	grace := c.grace(j)
	if force {
		grace = 0
	}
	switch {
	case j.finished():
		return &api.Error{Code: api.CodeInvalidState, Message: "Job has finished " + j.ID, ID: j.ID}
	case j.Stopping == "deleted" || (j.running() && j.Stopping != ""):
		if !force {
			if p := c.cfg.Partition(j.Partition); p != nil {
				grace = min(grace, p.PreemptGrace)
			}
		}
		if j.Stopping != "deleted" {
			if err := c.core.Apply(sched.Cancelled{ID: sched.JobID(j.ID)}); err != nil && !errors.Is(err, sched.ErrInvalid) {
				return coreError(j.ID, err)
			}
			j.Stopping = "deleted"
		}
		j.history(now, fmt.Sprintf("deleted by %s while stopping: stop within %v", id.User, grace))
		c.markDirty(j.ID)
		c.stopJobWithin(j, api.StopDeleted, grace)
		c.needPass = true
		return nil
	}
	if err := c.core.Apply(sched.Cancelled{ID: sched.JobID(j.ID)}); err != nil {
		return coreError(j.ID, err)
	}
	c.needPass = true
	if j.running() {
		j.Stopping = "deleted"
		j.State = api.StateExiting
		j.history(now, "deleted by qdel: stopping")
		c.markDirty(j.ID)
		c.stopJobWithin(j, api.StopDeleted, grace)
		return nil
	}
	if !j.ArrayIndices.IsZero() {
		// Running subjobs are stopped by the core's cancellation through
		// their own ids; mark them here.
		for _, sj := range c.jobs {
			if sj.ArrayParent == j.ID && sj.running() && sj.Stopping != "deleted" {
				sj.Stopping, sj.State = "deleted", api.StateExiting
				sj.history(now, "deleted with its array: stopping")
				c.markDirty(sj.ID)
				c.stopJob(sj, api.StopDeleted)
			}
		}
		if j.State == api.StateArray {
			j.history(now, "deleted by qdel: remaining subjobs removed")
			c.markDirty(j.ID)
			return nil
		}
	}
	c.finishDeleted(j, now, "deleted by qdel")
	return nil
}

// setHold applies qhold/qrls: a user hold, or an admin hold when an admin asks.
func (c *Controller) setHold(id Identity, j *job, set bool) *api.Error {
	if j.running() || j.finished() {
		return &api.Error{Code: api.CodeInvalidState, Message: "Request invalid for state of job " + j.ID, ID: j.ID}
	}
	bit := sched.HoldUser
	if c.auth.isAdmin(id) {
		bit = sched.HoldAdmin
		if !set {
			bit = sched.HoldUser | sched.HoldAdmin | sched.HoldSystem
		}
	} else if !set && holdBits(j.Hold)&^sched.HoldUser != 0 && holdBits(j.Hold)&sched.HoldUser == 0 {
		return &api.Error{Code: api.CodePermission, Message: "Unauthorized Request: only an admin may release " + j.ID, ID: j.ID}
	}
	if err := c.core.Apply(sched.HoldChanged{ID: sched.JobID(j.ID), Set: set, Bit: bit}); err != nil {
		return coreError(j.ID, err)
	}
	h := holdBits(j.Hold)
	if set {
		h |= bit
	} else {
		h &^= bit
	}
	j.Hold = holdLetters(h)
	if j.Hold != "" {
		j.State = api.StateHeld
	} else if j.State == api.StateHeld {
		j.State = pendingState(j, sched.ReasonNone) // Q, or B for a begun array
	}
	what := "released"
	if set {
		what = "held"
	}
	j.history(c.now(), what+" by "+id.User)
	c.markDirty(j.ID)
	c.needPass = true
	return nil
}

// stat lists jobs for qstat: whole records, or summary lines.
func (c *Controller) stat(id Identity, f *api.StatFilter, resp *api.Response) {
	c.statWith(id, f, resp, nil)
}

// statWith is stat with jobs from the history that the spool no longer
// has (hist, in job order) merged into the listing in job order.
func (c *Controller) statWith(id Identity, f *api.StatFilter, resp *api.Response, hist []api.Job) {
	if f == nil {
		f = &api.StatFilter{}
	}
	var sel []*job
	av := c.newArrayView()
	if len(f.IDs) > 0 {
		for _, s := range f.IDs {
			js, e := c.lookup(s)
			if e != nil {
				resp.Error = e
				return
			}
			for _, j := range js {
				sel = append(sel, j)
				if !j.ArrayIndices.IsZero() && f.Subjobs {
					sel = append(append(sel, av.records(j)...), av.unstarted(j)...)
				}
			}
		}
	} else {
		sel = make([]*job, 0, len(c.jobs))
		for _, j := range c.jobs {
			if (j.finished() && !f.Finished) || (f.User != "" && j.Owner.User != f.User) || (j.ArrayParent != "" && !f.Subjobs) {
				continue
			}
			sel = append(sel, j)
			if !j.ArrayIndices.IsZero() && f.Subjobs {
				sel = append(sel, av.unstarted(j)...)
			}
		}
	}
	sortJobs(sel)
	now := c.now()
	var buf []byte
	if f.Summary {
		buf = make([]byte, 0, 160*len(sel))
	} else {
		resp.Jobs = make([]api.Job, 0, len(sel))
	}
	emitHist := func(before uint64) {
		for len(hist) > 0 && hist[0].Seq < before {
			if f.Summary {
				buf = api.AppendSummary(buf, &hist[0])
			} else {
				resp.Jobs = append(resp.Jobs, hist[0])
			}
			hist = hist[1:]
		}
	}
	est := c.core.Estimates() // the core's reservations: estimates are its decisions, shown as they are
	for _, j := range sel {
		emitHist(j.Seq)
		rec := j.Job
		if j.running() && !j.StartTime.IsZero() {
			rec.Used += now.Sub(j.StartTime)
		}
		if e, ok := est[sched.JobID(j.ID)]; ok && !j.finished() && !j.running() {
			rec.Estimated = &api.Estimated{StartTime: e.Start, Allocs: apiAllocs(e.Allocs)}
		}
		if f.Full && j.running() {
			rec.Domains = c.jobDomains(j)
		}
		switch {
		case f.Summary:
			buf = api.AppendSummary(buf, &rec)
			continue
		case !f.Full:
			rec.Script, rec.Env, rec.History, rec.Command = "", nil, nil, nil
		}
		c.redact(id, &rec) // every answer but the summary lines, brief ones too (Shell)
		if !j.ArrayIndices.IsZero() {
			rec.ArrayStates = av.states(j)
		}
		resp.Jobs = append(resp.Jobs, rec)
	}
	emitHist(math.MaxUint64)
	resp.Summary = buf
}

// sortJobs orders jobs by number, an array's own row before its subjobs,
// subjobs by index. It sorts keys by value: comparing through 100,000
// pointers costs more than the rest of a qstat.
func sortJobs(jobs []*job) {
	type key struct {
		seq uint64
		idx int
		j   *job
	}
	keys := make([]key, len(jobs))
	for i, j := range jobs {
		keys[i] = key{j.Seq, -1, j}
		if j.ArrayParent != "" {
			keys[i].idx = j.ArrayIndex
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	for i, k := range keys {
		jobs[i] = k.j
	}
}

// shareStatus is qstat -Q.
func (c *Controller) shareStatus() []api.ShareStatus {
	var out []api.ShareStatus
	for _, u := range c.core.Shares() {
		st := api.ShareStatus{Name: u.Share, Partition: u.Partition, Strategy: u.Strategy.String(), State: "ENABLED",
			Quota: u.Quota, InUse: u.InUse, Borrowed: u.Borrowed, Lent: u.Lent, Pending: u.Pending, Running: u.Running,
			Preemptions: c.preempted[u.Share], BorrowLimit: -1, FairUsage: u.FairUsage / 3600}
		if sh := c.cfg.Share(u.Share); sh != nil {
			st.BorrowLimit = sh.BorrowLimit
			if !sh.Enabled {
				st.State = "DISABLED"
			}
		} else {
			st.State = "REMOVED"
		}
		out = append(out, st)
	}
	return out
}

// drain marks a node drained or resumes it (admins only), with the
// admin's comment on it where comment is not nil.
func (c *Controller) drain(id Identity, name string, drain bool, comment *string) *api.Error {
	if !c.auth.isAdmin(id) {
		return &api.Error{Code: api.CodePermission, Message: "only admins may drain or resume nodes"}
	}
	if c.cfg.Node(name) == nil {
		return &api.Error{Code: api.CodeBadRequest, Message: fmt.Sprintf("no node %q", name)}
	}
	if comment != nil {
		if err := checkNodeComment(*comment); err != nil {
			return &api.Error{Code: api.CodeBadRequest, Message: fmt.Sprintf("node %s: %v", name, err)}
		}
		if e := c.setNodeComment(name, *comment); e != nil {
			return e
		}
	}
	n := c.node(name)
	was, faults, failing := n.drained, n.faults, n.runtimeFail
	n.drained = drain
	if !drain {
		n.clearRuntimeFail() // the admin says its runtime is repaired
		c.clearGPUFaults(n)  // and its GPUs reset (gpuhealth.go)
	}
	if err := c.syncDrain(n); err != nil {
		n.drained, n.faults, n.runtimeFail = was, faults, failing
		return &api.Error{Code: api.CodeBadRequest, Message: err.Error()}
	}
	if err := c.saveDrained(); err != nil {
		return &api.Error{Code: api.CodeInternal, Message: "node " + name + ": " + err.Error()}
	}
	c.log.Info("node state changed by admin", "node", name, "drain", drain, "by", id.User)
	c.needPass = true
	return nil
}

// wait blocks until a job ends (qsub -W block=true) and returns it.
func (c *Controller) wait(ctx context.Context, id Identity, req *api.Request) *api.Response {
	if len(req.IDs) != 1 {
		return &api.Response{Error: badRequest("wait: give exactly one job id")}
	}
	resp := &api.Response{}
	o := &op{done: make(chan struct{})}
	o.fn = func() {
		jobs, e := c.lookup(req.IDs[0])
		if e != nil {
			resp.Error = e
			return
		}
		j := jobs[0]
		if j.finished() {
			resp.Jobs = []api.Job{c.redacted(id, j)}
			return
		}
		o.hold = true
		c.waiters[j.ID] = append(c.waiters[j.ID], func(j *job) {
			resp.Jobs = []api.Job{c.redacted(id, j)}
			c.release = append(c.release, o)
		})
	}
	select {
	case c.ops <- o:
	case <-ctx.Done():
		return &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: "controller stopping"}}
	}
	select {
	case <-o.done:
		return resp
	case <-ctx.Done():
		return &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: "controller stopping"}}
	}
}

// unstartedSubjob deletes a subjob that has not started yet (qdel 123[7]):
// the core drops the index, and a finished record stays for qstat -x. It
// returns no jobs: there is nothing left to do for the caller.
func (c *Controller) unstartedSubjob(id Identity, s string) ([]*job, *api.Error) {
	unknown := &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id " + s, ID: s}
	r, err := parseRef(s, c.cfg.Cluster.Name)
	idx, single := r.Single()
	if err != nil || r.Kind != jobid.Sub || !single {
		return nil, unknown
	}
	parent := c.jobs[arrayID(r.Seq, c.cfg.Cluster.Name)]
	if parent == nil || parent.finished() {
		return nil, unknown
	}
	if !c.mayTouch(id, parent) {
		return nil, &api.Error{Code: api.CodePermission, Message: "Unauthorized Request " + s, ID: s}
	}
	sub := subjobID(r.Seq, idx, c.cfg.Cluster.Name)
	if err := c.core.Apply(sched.Cancelled{ID: sched.JobID(sub)}); err != nil {
		return nil, unknown // not an index of the array, or already started and gone
	}
	j := newSubjob(parent, sub, idx)
	c.jobs[j.ID] = j
	c.finishDeleted(j, c.now(), "deleted by qdel before it started")
	c.needPass = true
	return nil, nil
}
