package policy

import (
	"fmt"
	"time"
)

// Strategy says what a share does with its idle quota.
type Strategy uint8

const (
	// Reserve keeps idle GPUs for the share's own future jobs; never lends or borrows.
	Reserve Strategy = iota
	// Lend lends idle GPUs to borrowing shares; never borrows.
	Lend
	// LendAndBorrow lends idle GPUs and borrows others' idle GPUs up to BorrowLimit.
	LendAndBorrow
)

var strategyNames = [...]string{Reserve: "RESERVE", Lend: "LEND", LendAndBorrow: "LEND_AND_BORROW"}

func (s Strategy) String() string {
	if int(s) < len(strategyNames) {
		return strategyNames[s]
	}
	return fmt.Sprintf("Strategy(%d)", s)
}

// ParseStrategy parses RESERVE, LEND or LEND_AND_BORROW.
func ParseStrategy(s string) (Strategy, error) {
	for i, n := range strategyNames {
		if n == s {
			return Strategy(i), nil
		}
	}
	return 0, fmt.Errorf("unknown strategy %q (want RESERVE, LEND or LEND_AND_BORROW)", s)
}

// Unlimited is the BorrowLimit and PreemptionRetries value meaning "no limit".
const Unlimited = -1

// MaxWalltime bounds a job's (and a partition's default) walltime, so that
// expected ends stay far below the core's "never".
const MaxWalltime = 100 * 365 * 24 * time.Hour

// MaxNeverFitsFailAfter bounds a partition's never_fits_fail_after (the
// core's Partition.NeverFitsFailAfter).
const MaxNeverFitsFailAfter = 365 * 24 * time.Hour

// DefaultUsageHalfLife is the half-life of usage when the configuration
// sets none (Slurm's default PriorityDecayHalfLife).
const DefaultUsageHalfLife = 7 * 24 * time.Hour
