package sched

import (
	"time"

	"github.com/sharq-hpc/sharq/policy"
)

// neverFitsNow says why j can never start in its share, or ReasonNone:
// ReasonNeverFits when it asks for more GPUs (or CPUs, memory) per node
// than any node of the partition has, or more such nodes (with the labels
// it selects) than the partition has; else ReasonQuotaLimit when it asks for more GPUs than the
// share can ever hold (its quota plus its borrow limit; with no limit, all
// the partition's GPUs but the RESERVE shares' quotas, or its quota if that
// is more; and never more than the share's max_gpus_per_user; AWS Batch
// says MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED). A place=excl job
// counts every GPU of its nodes (job.charge).
func (s *Scheduler) neverFitsNow(j *job) Reason {
	sh := j.share
	if sh == nil || sh.removed || sh.part == nil {
		return ReasonNone
	}
	p := sh.part
	if !s.nodesFit(p, j) {
		return ReasonNeverFits
	}
	if r := s.topoNeverFits(p, j); r != ReasonNone {
		return r
	}
	reach := sh.quota()
	switch bc := sh.borrowCap(); {
	case bc > 0:
		reach += bc
	case bc < 0:
		reach = max(reach, p.declCap-p.reserveQuota)
	}
	if c := sh.cfg.MaxGPUsPerUser; c > 0 && !sh.removed {
		reach = min(reach, c) // issue 30 item 8: no user may hold more
	}
	if j.charge() > reach {
		return ReasonQuotaLimit
	}
	return ReasonNone
}

// nodesFit says whether p has j.Nodes nodes that could each hold j's part.
func (s *Scheduler) nodesFit(p *partition, j *job) bool {
	if j.CPUsPerNode <= 1 && j.MemPerNode == 0 && len(j.Labels) == 0 {
		// Every node that accounts CPUs has at least one.
		return j.GPUsPerNode < len(p.atLeast) && p.atLeast[j.GPUsPerNode] >= j.Nodes
	}
	n := 0
	for _, nd := range p.nodes {
		if nd.fitsDeclared(j) {
			if n++; n >= j.Nodes {
				return true
			}
		}
	}
	return false
}

// computeAtLeast recounts, per GPU count, the partition's nodes declaring
// at least that many GPUs.
func computeAtLeast(p *partition) {
	mx := 0
	for _, n := range p.nodes {
		mx = max(mx, n.gpus)
	}
	p.atLeast = make([]int, mx+1)
	p.declCap = 0
	for _, n := range p.nodes {
		p.atLeast[n.gpus]++
		p.declCap += n.gpus
	}
	for g := mx - 1; g >= 0; g-- {
		p.atLeast[g] += p.atLeast[g+1]
	}
}

// nfCheck says whether checkNeverFits may set the hold or only release it.
type nfCheck bool

const (
	holdOrRelease nfCheck = true  // a new or reconfigured entry
	releaseOnly   nfCheck = false // a recheck of entries held before
)

// checkNeverFits sets the system hold on a pending entry that can never fit
// (holdOrRelease) and releases the hold the core set once it fits.
func (s *Scheduler) checkNeverFits(j *job, mode nfCheck) {
	r := s.neverFitsNow(j)
	nf := r != ReasonNone
	p := j.share.part
	switch {
	case nf && j.neverFits:
		j.nfReason = r
		if p != nil && !containsJob(p.neverFits, j) {
			p.neverFits = append(p.neverFits, j)
		}
	case nf && mode == holdOrRelease && j.Hold&HoldSystem == 0:
		j.neverFits, j.nfReason, j.nfSince = true, r, time.Time{} // failNeverFits stamps it
		j.Hold |= HoldSystem
		s.plan.Holds = append(s.plan.Holds, HoldChange{Job: j.ID, Bit: HoldSystem, Set: true, Reason: r})
		if p != nil {
			p.neverFits = append(p.neverFits, j)
		}
	case !nf && j.neverFits:
		j.neverFits, j.nfSince = false, time.Time{}
		j.Hold &^= HoldSystem
		s.plan.Holds = append(s.plan.Holds, HoldChange{Job: j.ID, Bit: HoldSystem})
		if p != nil {
			p.neverFits = removeJob(p.neverFits, j)
		}
	}
}

// recheckNeverFits releases the system holds of a partition's jobs that fit
// now (after a node came up with more GPUs).
func (s *Scheduler) recheckNeverFits(p *partition) {
	list := append([]*job(nil), p.neverFits...)
	for _, j := range list {
		if j.gone || j.state != Pending || !j.neverFits {
			p.neverFits = removeJob(p.neverFits, j)
			continue
		}
		s.checkNeverFits(j, releaseOnly)
		s.refresh(j)
	}
}

// Failing jobs that never fit (issue 30 item 8c). A job the core holds as
// never fitting waits until an admin changes the configuration, the owner
// alters or deletes it. With its partition's NeverFitsFailAfter set, it
// fails instead once it has been held that long (ReasonNeverFitsTimeLimit),
// as AWS Batch's job queues cancel a job stuck RUNNABLE for a
// MISCONFIGURATION reason after their job state time limit. The time counts
// from the first Schedule call after this core set the hold: a controller
// restart (or a reload that releases and sets it again) starts it over, so
// a job is never failed sooner than the setting says. A reload that sets
// the limit counts it from the next call for the jobs already held.

// maxNeverFitsFailAfter bounds Partition.NeverFitsFailAfter.
const maxNeverFitsFailAfter = policy.MaxNeverFitsFailAfter

// failNeverFits fails the jobs of p held as never fitting for
// NeverFitsFailAfter.
func (s *Scheduler) failNeverFits(p *partition) {
	limit := p.cfg.NeverFitsFailAfter
	if limit <= 0 || len(p.neverFits) == 0 {
		return
	}
	for _, j := range append([]*job(nil), p.neverFits...) {
		if j.gone || j.state != Pending || !j.neverFits {
			p.neverFits = removeJob(p.neverFits, j)
			continue
		}
		if j.nfSince.IsZero() {
			// Held since the last call: the time counts from this one,
			// which comes no sooner than the event that held it.
			j.nfSince = s.now
		}
		if s.now.Before(j.nfSince.Add(limit)) {
			continue
		}
		p.neverFits = removeJob(p.neverFits, j)
		j.neverFits, j.nfSince = false, time.Time{}
		j.Hold &^= HoldSystem
		s.failPending(j, ReasonNeverFitsTimeLimit)
	}
}

// neverFitsWake is when the first job of p held as never fitting is due
// to fail; false when none is.
func (s *Scheduler) neverFitsWake(p *partition) (time.Time, bool) {
	limit := p.cfg.NeverFitsFailAfter
	var t time.Time
	ok := false
	if limit <= 0 {
		return t, false
	}
	for _, j := range p.neverFits {
		if j.gone || j.state != Pending || !j.neverFits || j.nfSince.IsZero() {
			continue
		}
		if at := j.nfSince.Add(limit); !ok || at.Before(t) {
			t, ok = at, true
		}
	}
	return t, ok
}

func containsJob(list []*job, j *job) bool {
	for _, x := range list {
		if x == j {
			return true
		}
	}
	return false
}

// NeverFits says why a job like jb could never start as the cluster is now
// configured (ReasonNeverFits, ReasonQuotaLimit), or ReasonNone; it
// changes nothing. A driver asks before it submits, to refuse such a job
// as PBS's qsub does, rather than have it held.
func (s *Scheduler) NeverFits(jb Job) Reason {
	sh := s.shareByName[jb.Share]
	if sh == nil || jb.Nodes < 1 {
		return ReasonNone
	}
	return s.neverFitsNow(&job{Job: jb, share: sh})
}
