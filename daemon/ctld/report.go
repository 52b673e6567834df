package ctld

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
)

// Reads of the job history (sharqctl report, qstat -x for jobs that left
// the spool). They run on the client's goroutine, never on the loop: a
// report over a year of history does not delay scheduling. Only the
// caller's rights are read on the loop.

// viewer is what a caller may see of the history.
type viewer struct {
	user   string
	uid    uint32
	all    bool // an admin, or the site lets users see everything
	admin  bool // reads every job's secrets (mayRead)
	hist   *history
	domain string // cluster name, for job ids
}

// viewerOf reads the caller's rights on the loop.
func (c *Controller) viewerOf(ctx context.Context, id Identity) (viewer, error) {
	var v viewer
	err := c.do(ctx, func() {
		admin := c.auth.isAdmin(id)
		v = viewer{user: id.User, uid: id.UID, all: admin || c.cfg.Accounting.UsersSeeAll, admin: admin, hist: c.hist,
			domain: c.cfg.Cluster.Name}
	})
	return v, err
}

// show is the job qstat shows of history record r, as it shows a live job
// to the viewer: without the script, environment, command and event log
// unless full (qstat -f), and without the script, environment, command
// and shell unless the viewer owns the job or is an admin (mayRead).
func (v viewer) show(r acct.Record, full bool) api.Job {
	j := apiJob(r)
	if !full {
		j.Script, j.Env, j.History, j.Command = "", nil, nil, nil
	}
	if j.Owner.UID != v.uid && !v.admin {
		clearSecrets(&j)
	}
	return j
}

// sees: a user's own job, or anything for those who see all.
func (v viewer) sees(r *acct.Record) bool { return v.all || r.UID == v.uid }

// Bounds of a report's period.
const (
	defaultReportPeriod = 30 * 24 * time.Hour
	maxReportPeriod     = 20 * 366 * 24 * time.Hour
	timelineSteps       = 400
	maxTimelineSamples  = 500_000
)

func internalErr(err error) *api.Response {
	return &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: err.Error()}}
}

// report answers OpReport.
func (c *Controller) report(ctx context.Context, id Identity, spec *api.ReportSpec) *api.Response {
	if spec == nil {
		return &api.Response{Error: badRequest("report: no report given")}
	}
	v, err := c.viewerOf(ctx, id)
	if err != nil {
		return internalErr(err)
	}
	store, err := v.hist.get(ctx)
	if err != nil {
		return internalErr(err)
	}
	now := time.Now()
	start, end := spec.Start, spec.End
	if end.IsZero() {
		end = now
	}
	if start.IsZero() {
		start = end.Add(-defaultReportPeriod)
	}
	switch {
	case !start.Before(end):
		return &api.Response{Error: badRequest(fmt.Sprintf("report: start %s is not before end %s", start.Format(time.RFC3339), end.Format(time.RFC3339)))}
	case end.Sub(start) > maxReportPeriod:
		return &api.Response{Error: badRequest("report: the period is longer than 20 years")}
	case len(spec.User) > acct.MaxTextLen || len(spec.Share) > acct.MaxTextLen:
		return &api.Response{Error: badRequest("report: filter too long")}
	}
	user := spec.User
	if !v.all {
		if user != "" && user != v.user {
			return &api.Response{Error: &api.Error{Code: api.CodePermission, Message: "report: only admins may see other users' jobs"}}
		}
		user = v.user
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	switch spec.Kind {
	case api.ReportUsage:
		by := spec.By
		if by == "" {
			by = string(acct.ByShare)
		}
		b, err := acct.ParseBy(by)
		if err != nil {
			return &api.Response{Error: badRequest(err.Error())}
		}
		rows, err := store.Usage(ctx, acct.UsageQuery{Start: start, End: end, By: b, User: user})
		if err != nil {
			return reportErr(err)
		}
		resp := &api.Response{Usage: make([]api.UsageRow, 0, len(rows))}
		for _, r := range rows {
			if spec.Share != "" && b == acct.ByShare && r.Key != spec.Share {
				continue
			}
			resp.Usage = append(resp.Usage, api.UsageRow{Key: r.Key, Jobs: r.Jobs, Owned: r.Owned, Borrowed: r.Borrowed,
				Lent: r.Lent, Lost: r.Lost, Grace: r.Grace, Preemptions: r.Preemptions, Quota: r.Quota, InUse: r.InUse,
				Utilization: r.Utilization, Sampled: r.Sampled, Idle: r.Idle, Efficiency: r.Efficiency})
		}
		if spec.Timeline {
			if resp.Timeline, err = timeline(ctx, store, start, end, spec.Share); err != nil {
				return reportErr(err)
			}
		}
		return resp
	case api.ReportJobs:
		f := acct.JobFilter{User: user, Share: spec.Share, Start: start, End: end, Limit: api.MaxReportJobs}
		if spec.Limit < 0 {
			return &api.Response{Error: badRequest("report: negative limit")}
		}
		if spec.Limit > 0 {
			f.Limit = min(spec.Limit, api.MaxReportJobs)
		}
		if spec.State != "" {
			o, err := acct.ParseOutcome(spec.State)
			if err != nil {
				return &api.Response{Error: badRequest(err.Error())}
			}
			f.Outcome = o
		}
		recs, err := store.Jobs(ctx, f)
		if err != nil {
			return reportErr(err)
		}
		resp := &api.Response{Jobs: make([]api.Job, 0, len(recs))}
		for _, r := range recs {
			resp.Jobs = append(resp.Jobs, v.show(r, false))
		}
		return resp
	}
	return &api.Response{Error: badRequest(fmt.Sprintf("report: unknown kind %q (want usage or jobs)", spec.Kind))}
}

func reportErr(err error) *api.Response {
	if errors.Is(err, acct.ErrInvalid) {
		return &api.Response{Error: badRequest(err.Error())}
	}
	return internalErr(err)
}

// timeline averages the share samples of [start, end) into at most
// timelineSteps steps per share.
func timeline(ctx context.Context, store acct.Store, start, end time.Time, share string) ([]api.UsagePoint, error) {
	xs, err := store.Samples(ctx, start, end, maxTimelineSamples)
	if err != nil {
		return nil, err
	}
	step := max(end.Sub(start)/timelineSteps, time.Second)
	type key struct {
		i     int64
		share string
	}
	type acc struct{ owned, borrowed, secs float64 }
	sums := map[key]*acc{}
	for _, x := range xs {
		if share != "" && x.Share != share {
			continue
		}
		k := key{int64(x.Time.Sub(start) / step), x.Share}
		a := sums[k]
		if a == nil {
			a = &acc{}
			sums[k] = a
		}
		a.owned += float64(x.InUse-x.Borrowed) * x.Seconds
		a.borrowed += float64(x.Borrowed) * x.Seconds
		a.secs += x.Seconds
	}
	out := make([]api.UsagePoint, 0, len(sums))
	for k, a := range sums {
		out = append(out, api.UsagePoint{Time: start.Add(time.Duration(k.i) * step).UTC(), Share: k.share,
			Owned: a.owned / a.secs, Borrowed: a.borrowed / a.secs})
	}
	sort.Slice(out, func(i, k int) bool {
		if !out[i].Time.Equal(out[k].Time) {
			return out[i].Time.Before(out[k].Time)
		}
		return out[i].Share < out[k].Share
	})
	return out, nil
}

// statHistory answers qstat -x with job ids: each id the spool no longer
// has is looked up in the history.
func (c *Controller) statHistory(ctx context.Context, id Identity, f *api.StatFilter) *api.Response {
	v, err := c.viewerOf(ctx, id)
	if err != nil {
		return internalErr(err)
	}
	out := &api.Response{}
	for _, s := range f.IDs {
		one := *f
		one.IDs = []string{s}
		resp := &api.Response{}
		var full string
		if err := c.do(ctx, func() { c.stat(id, &one, resp); full = c.normalizeID(s) }); err != nil {
			return internalErr(err)
		}
		if resp.Error != nil && resp.Error.Code == api.CodeUnknownJob {
			if r, ok := c.historyJob(ctx, v, full); ok {
				j := v.show(r, f.Full)
				resp = &api.Response{}
				if f.Summary {
					resp.Summary = api.AppendSummary(nil, &j)
				} else {
					resp.Jobs = []api.Job{j}
				}
			}
		}
		if resp.Error != nil {
			return resp
		}
		out.Jobs = append(out.Jobs, resp.Jobs...)
		out.Summary = append(out.Summary, resp.Summary...)
	}
	return out
}

// historyJob finds a job the caller may see in the history.
func (c *Controller) historyJob(ctx context.Context, v viewer, id string) (acct.Record, bool) {
	store, err := v.hist.get(ctx)
	if err != nil || len(id) > acct.MaxIDLen {
		return acct.Record{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	recs, err := store.Jobs(ctx, acct.JobFilter{ID: id, Limit: 2, Detail: true}) // one job: its detail too
	if err != nil {
		c.log.Warn("job history: lookup", "job", id, "err", err)
		return acct.Record{}, false
	}
	for _, r := range recs {
		if r.ID == id && v.sees(&r) {
			return r, true
		}
	}
	return acct.Record{}, false
}

// Bounds of qstat -x without ids in the history.
const (
	defaultStatHistory = 30 * 24 * time.Hour
	maxStatHistoryJobs = 2000
)

// statFinished answers qstat -x without ids: the spool's jobs, finished
// ones too, and the history's jobs that ended since f.Since (default
// defaultStatHistory ago; the newest maxStatHistoryJobs) that the spool no
// longer has. The history is read off the loop; a user sees only their own
// jobs' history unless the site lets users see all. Without a history (off,
// or its database down) the answer is the spool's alone.
func (c *Controller) statFinished(ctx context.Context, id Identity, f *api.StatFilter) *api.Response {
	v, err := c.viewerOf(ctx, id)
	if err != nil {
		return internalErr(err)
	}
	since := f.Since
	if since.IsZero() {
		since = time.Now().Add(-defaultStatHistory)
	}
	var hist []api.Job
	if recs, ok := c.statHistoryList(ctx, v, f, since); ok {
		hist = make([]api.Job, 0, len(recs))
		for _, r := range recs {
			if r.ArrayParent != "" && !f.Subjobs {
				continue
			}
			hist = append(hist, v.show(r, f.Full))
		}
		sort.SliceStable(hist, func(i, k int) bool {
			if hist[i].Seq != hist[k].Seq {
				return hist[i].Seq < hist[k].Seq
			}
			return hist[i].ArrayIndex < hist[k].ArrayIndex
		})
	}
	resp := &api.Response{}
	err = c.do(ctx, func() {
		// A job still in the spool is shown from the spool, once.
		kept := hist[:0]
		for _, j := range hist {
			if c.jobs[j.ID] == nil {
				kept = append(kept, j)
			}
		}
		c.statWith(id, f, resp, kept)
	})
	if err != nil {
		return internalErr(err)
	}
	return resp
}

// statHistoryList reads the history's part of qstat -x: false when there
// is none to read.
func (c *Controller) statHistoryList(ctx context.Context, v viewer, f *api.StatFilter, since time.Time) ([]acct.Record, bool) {
	user := f.User
	if !v.all {
		if user != "" && user != v.user {
			return nil, false // others' history is not theirs to see
		}
		user = v.user
	}
	if len(user) > acct.MaxTextLen {
		return nil, false
	}
	store, err := v.hist.get(ctx)
	if err != nil {
		if !errors.Is(err, errHistoryOff) {
			c.log.Warn("job history: qstat -x lists the spool only", "err", err)
		}
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	recs, err := store.Jobs(ctx, acct.JobFilter{User: user, Start: since, Limit: maxStatHistoryJobs, Newest: true})
	if err != nil {
		c.log.Warn("job history: qstat -x lists the spool only", "err", err)
		return nil, false
	}
	return recs, true
}
