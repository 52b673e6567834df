package sched

import "time"

// Bounded borrower claims (issue 30 item 2).
//
// A blocked borrower claims its size of the partition's lendable GPUs for
// the rest of a pass (p.claimed; pass.go, tryBorrow): a later borrower of
// another share that fits only without the claims waits with Priority
// (FairShare under fair share), so that small borrowers do not take every
// GPU as it frees and starve a large one. That claim is worth its idle
// GPUs only if it is met: a claim stands only while the lendable GPUs now,
// less the claims ahead of it, plus the GPUs of the partition's running
// jobs expected to end within claimWindow hold it. A job's expected end is
// its start plus its walltime, or its partition's DefaultWalltime
// (expectedEnd); a job with neither never counts, and one past its end
// counts as ending now (the driver ends it at its walltime). A claim that
// cannot be met in that time holds nothing: the later borrowers that fit
// the idle GPUs start, as Kueue admits a workload that fits while the head
// of another queue does not. Before, a 1-GPU borrower waited behind another
// share's blocked 2-GPU borrower for as long as a job without walltime ran
// (100,000 s in the audit), with one lendable GPU idle.
//
// The claim of a borrower ahead in the same share (share.reservedP) is not
// bounded: it keeps the share's own queue order, as a within-quota job
// blocked for room holds its share's later jobs.
//
// A claim is decided in a pass, but the jobs it keeps waiting keep their
// reason until their share is looked at again: a later start (in the same
// pass, or a pass that looks only at other shares) may leave the claim
// unmet, so recheckClaims (pass.go) marks such shares for the next pass,
// and a claimant leaving the queue marks its partition (queueRemove).
//
// Cost: one walk over the partition's running jobs in a pass that makes a
// claim (claimMet computes p.soon once per pass).

// claimWindow is how soon a blocked borrower's claim must be able to be
// met for it to stand (Slurm's default bf_window is a day too).
const claimWindow = 24 * time.Hour

// claimMet says whether a claim of g lendable GPUs, after the claims
// already made in this pass, can be met within claimWindow.
func (s *Scheduler) claimMet(p *partition, g int) bool {
	if !p.soonKnown {
		p.soon, p.soonKnown = s.endingWithin(p, s.now.Add(claimWindow)), true
	}
	return p.borrowable()-p.claimed+p.soon >= g
}

// endingWithin counts the GPUs of p's running jobs expected to end by t.
func (s *Scheduler) endingWithin(p *partition, t time.Time) int {
	n := 0
	for _, sh := range p.shares {
		for _, x := range sh.running {
			if !s.expectedEnd(x).After(t) {
				n += x.gpuN
			}
		}
	}
	return n
}
