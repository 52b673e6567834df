package conf

import (
	"time"

	"github.com/sharq-hpc/sharq/policy"
)

// Scheduler is the [scheduler] table: rules of the scheduling core that
// apply to every partition. Every key may change on a reload.
type Scheduler struct {
	// FairShare divides idle lendable GPUs among borrowing shares by their
	// decayed borrowed usage per fair_weight (and the jobs of a share with
	// fair_share_users by their users' decayed usage); false keeps
	// submission order among borrowers (FIFO). Default true.
	FairShare bool
	// UsageHalfLife is the half-life of recorded usage (Slurm's
	// PriorityDecayHalfLife); default policy.DefaultUsageHalfLife (7d).
	UsageHalfLife time.Duration
	// Backfill turns on walltime-aware reservations with EASY backfill
	// (default true): the first blocked job of each share, and the first
	// blocked borrower, reserve nodes and GPUs from the time running jobs'
	// walltimes end, and later jobs start only when they end before that
	// time or keep off those GPUs. false is the strict order without
	// reservations: a job within its share's quota blocked for room holds
	// every later job of its share, and blocked borrowers hold their size
	// of the lendable GPUs for the borrowers after them (see
	// daemon/sched/reservation.go).
	Backfill bool
	// FairPreemption lets a borrower that fair share serves first preempt
	// other shares' borrowing jobs when the lendable GPUs are taken: only
	// jobs wholly beyond their share's quota, only of a share that would
	// still borrow at least as much per fair_weight as the preemptor's
	// share once it starts (Kueue's LessThanOrEqualToFinalShare). Needs
	// fair_share; owners' reclaim is unchanged. Default DefaultFairPreemption.
	FairPreemption bool
	// FairPreemptionAfter is how long a borrower waits before it may
	// preempt for fair share, and how long a job runs before fair share
	// may preempt it; default DefaultFairPreemptionAfter.
	FairPreemptionAfter time.Duration
}

// Bounds of usage_half_life (those of the core).
const (
	MinUsageHalfLife = time.Minute
	MaxUsageHalfLife = 10 * 365 * 24 * time.Hour
)

// DefaultBackfill is [scheduler] backfill when the key is absent.
const DefaultBackfill = true

// Defaults of fair_preemption and fair_preemption_after, and the bound of
// the latter.
const (
	DefaultFairPreemption      = false
	DefaultFairPreemptionAfter = 10 * time.Minute
	MaxFairPreemptionAfter     = 365 * 24 * time.Hour
)

// scheduler reads the [scheduler] table (t may be nil: all defaults).
func (l *loader) scheduler(t *table) Scheduler {
	s := Scheduler{FairShare: true, UsageHalfLife: policy.DefaultUsageHalfLife, Backfill: DefaultBackfill,
		FairPreemption: DefaultFairPreemption, FairPreemptionAfter: DefaultFairPreemptionAfter}
	if t == nil {
		return s
	}
	if b, ok := t.boolean("fair_share"); ok {
		s.FairShare = b
	}
	if d, ok := t.duration("usage_half_life", s.UsageHalfLife); ok {
		if d < MinUsageHalfLife || d > MaxUsageHalfLife {
			t.errf("usage_half_life", "%v is out of range %v..%v", d, MinUsageHalfLife, MaxUsageHalfLife)
		} else {
			s.UsageHalfLife = d
		}
	}
	if b, ok := t.boolean("backfill"); ok {
		s.Backfill = b
	}
	if b, ok := t.boolean("fair_preemption"); ok {
		s.FairPreemption = b
	}
	if d, ok := t.duration("fair_preemption_after", s.FairPreemptionAfter); ok {
		if d < 0 || d > MaxFairPreemptionAfter {
			t.errf("fair_preemption_after", "%v is out of range 0s..%v", d, MaxFairPreemptionAfter)
		} else {
			s.FairPreemptionAfter = d
		}
	}
	t.unknown(keys["scheduler"]...)
	return s
}
