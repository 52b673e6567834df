package acct

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store is a job history backend.
type Store interface {
	// Record stores finished jobs in one transaction; a record whose ID is
	// already stored replaces it.
	Record(ctx context.Context, recs ...Record) error
	// Sample stores share samples in one transaction; a sample for a
	// (Time, Share) already stored replaces it.
	Sample(ctx context.Context, samples ...ShareSample) error
	// Jobs returns the records that match f, ordered by end time then
	// sequence number, at most f.Limit of them.
	Jobs(ctx context.Context, f JobFilter) ([]Record, error)
	// Usage sums the history over q's period, one row per share, user or
	// partition, ordered by key.
	Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
	// Samples returns the share samples whose Time is in [start, end),
	// ordered by time then share, at most limit of them.
	Samples(ctx context.Context, start, end time.Time, limit int) ([]ShareSample, error)
	// Purge drops the records that ended and the samples taken before
	// before, rounded down to a whole hour (UTC), and returns how many
	// records it dropped.
	Purge(ctx context.Context, before time.Time) (int64, error)
	Close() error
}

// Errors. Backends wrap them with the job id or the file.
var (
	ErrInvalid = errors.New("invalid history request")
	ErrCorrupt = errors.New("corrupt history row")
	ErrSchema  = errors.New("history database schema is newer than this sharq")
	ErrClosed  = errors.New("history store closed")
)

// JobFilter selects records. Zero fields match everything.
type JobFilter struct {
	ID      string // a job id; an array parent "12[].lab" also matches its subjobs
	User    string
	Share   string
	Outcome Outcome
	// Start and End bound the end time: Start <= end < End.
	Start, End time.Time
	Limit      int // 0: DefaultLimit; at most MaxLimit
	// Newest answers the Limit jobs that ended last, the last first (by
	// default: the first ones, in end order).
	Newest bool
	// Detail reads each record's Detail too (up to MaxDetailLen bytes a
	// job: ask for it for a few jobs, not for a report).
	Detail bool
}

// Limits on Jobs.
const (
	DefaultLimit = 1000
	MaxLimit     = 1_000_000
)

// Validate checks a filter.
func (f *JobFilter) Validate() error {
	if f.Outcome != "" {
		if _, err := ParseOutcome(string(f.Outcome)); err != nil {
			return err
		}
	}
	if f.Limit < 0 || f.Limit > MaxLimit {
		return fmt.Errorf("%w: limit %d (at most %d)", ErrInvalid, f.Limit, MaxLimit)
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) {
		return fmt.Errorf("%w: end %v before start %v", ErrInvalid, f.End, f.Start)
	}
	if len(f.ID) > MaxIDLen || len(f.User) > MaxTextLen || len(f.Share) > MaxTextLen {
		return fmt.Errorf("%w: filter field too long", ErrInvalid)
	}
	return nil
}

// By is what a usage report groups by.
type By string

const (
	ByShare     By = "share"
	ByUser      By = "user"
	ByPartition By = "partition"
)

// ParseBy reads a grouping name.
func ParseBy(s string) (By, error) {
	switch b := By(s); b {
	case ByShare, ByUser, ByPartition:
		return b, nil
	}
	return "", fmt.Errorf("%w: --by %q (want share, user or partition)", ErrInvalid, s)
}

// UsageQuery asks for a usage report over [Start, End). A job counts in the
// period it ended in; samples in the period they were taken in.
type UsageQuery struct {
	Start, End time.Time
	By         By
	User       string // only this user's jobs ("" = everyone's)
}

// UsageRow is one line of a usage report. GPU figures are GPU-hours.
type UsageRow struct {
	Key         string // share, user or partition
	Jobs        int    // finished jobs (array parents are not counted; their subjobs are)
	Owned       float64
	Borrowed    float64
	Lost        float64 // held by runs that were preempted
	Grace       float64 // held between SIGTERM and exit of preempted runs
	Preemptions int
	// Share and partition rows only (from the samples):
	Lent        float64 // the share's idle quota that other shares used
	Quota       float64 // quota GPU-hours (share) or capacity GPU-hours (partition)
	InUse       float64 // GPU-hours held, as sampled
	Utilization float64 // InUse / Quota; 0 when Quota is 0
	// GPU use, as the nodes sampled it: the GPU-hours of sampled jobs, the
	// part of them at < 5% use, and their efficiency (mean utilization,
	// weighted by GPU-hours, 0..1; 0 when none was sampled).
	Sampled    float64
	Idle       float64
	Efficiency float64
	util       float64 // sampled GPU-hours times their utilization
}

func (q *UsageQuery) validate() error {
	if _, err := ParseBy(string(q.By)); err != nil {
		return err
	}
	if q.Start.IsZero() || q.End.IsZero() || !q.Start.Before(q.End) {
		return fmt.Errorf("%w: usage period [%v, %v)", ErrInvalid, q.Start, q.End)
	}
	if len(q.User) > MaxTextLen {
		return fmt.Errorf("%w: user too long", ErrInvalid)
	}
	return nil
}
