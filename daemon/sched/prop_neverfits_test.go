package sched

import "time"

// The oracle of NeverFitsFailAfter (issue 30 item 8c): a job fails with
// ReasonNeverFitsTimeLimit only when its partition sets a limit and the
// world has seen it pending as never fitting (RequestExceedsLimits,
// QuotaLimitExceeded) since at least that long ago, without a reason in
// between that is not one of those.

// nfSeen is when the world first saw a job pending as never fitting, and
// its partition then.
type nfSeen struct {
	since time.Time
	part  string
}

// checkNeverFitsFail checks a plan's NeverFitsTimeLimit failures against
// the reasons the world saw, and records this plan's reasons.
func (w *world) checkNeverFitsFail(p Plan) {
	if w.nfSince == nil {
		w.nfSince = map[JobID]nfSeen{}
	}
	for _, f := range p.Failed {
		if f.Reason != ReasonNeverFitsTimeLimit {
			continue
		}
		w.cov.add("plan failed NeverFitsTimeLimit")
		seen, ok := w.nfSince[f.Job]
		limit := time.Duration(0)
		for _, pc := range w.s.cfg.Partitions {
			if pc.Name == seen.part {
				limit = pc.NeverFitsFailAfter
			}
		}
		if !ok || limit <= 0 || w.now.Sub(seen.since) < limit {
			w.t.Fatalf("%s failed NeverFitsTimeLimit at %v: seen never fitting %v since %v, limit %v\n%s", f.Job, w.now, ok, seen.since, limit, w.dump())
		}
		delete(w.nfSince, f.Job)
	}
	for _, pr := range p.Pending {
		if !pr.Reason.NeverFits() {
			delete(w.nfSince, pr.Job)
			continue
		}
		if _, ok := w.nfSince[pr.Job]; ok {
			continue
		}
		if j, ok := w.s.jobs[pr.Job]; ok && j.share != nil {
			w.nfSince[pr.Job] = nfSeen{since: w.now, part: j.share.cfg.Partition}
		}
	}
}
