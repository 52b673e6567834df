package conf

import (
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Scheduler is the [scheduler] table: rules of the scheduling core that
// apply to every partition.
type Scheduler struct {
	// FairShare divides idle lendable GPUs among borrowing shares by their
	// decayed borrowed usage per fair_weight (and the jobs of a share with
	// fair_share_users by their users' decayed usage); false keeps
	// submission order among borrowers (FIFO). Default true.
	FairShare bool
	// UsageHalfLife is the half-life of recorded usage (Slurm's
	// PriorityDecayHalfLife); default sched.DefaultUsageHalfLife (7d).
	UsageHalfLife time.Duration
}

// Bounds of usage_half_life (those of the core).
const (
	MinUsageHalfLife = time.Minute
	MaxUsageHalfLife = 10 * 365 * 24 * time.Hour
)

// scheduler reads the [scheduler] table (t may be nil: all defaults).
func (l *loader) scheduler(t *table) Scheduler {
	s := Scheduler{FairShare: true, UsageHalfLife: sched.DefaultUsageHalfLife}
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
	t.unknown("fair_share", "usage_half_life")
	return s
}
