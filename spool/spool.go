package spool

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Record is one job as the spool stores it. Data is opaque to the spool.
type Record struct {
	ID       string    // job id, e.g. "123.lab", "123[].lab" or "123[7].lab"
	Data     []byte    // opaque (the controller's JSON)
	Finished time.Time // zero while the job is active; set once it reaches a final state
}

// Spool is durable storage for job records. Implementations are safe for
// concurrent use.
type Spool interface {
	// NextIDs reserves n >= 1 consecutive job numbers and returns the first.
	// The reservation is durable before NextIDs returns: a number is never
	// handed out twice, even across a crash. Numbers start at 1 and always lie
	// above the job number of every record ever Put.
	NextIDs(ctx context.Context, n int) (uint64, error)
	// Put writes recs atomically in one transaction and syncs before it
	// returns. A record with an existing id replaces it. Ids that do not
	// parse (see SortKey) fail the whole Put with ErrBadID, records above
	// MaxRecordSize with ErrTooLarge, before anything is written. Put of no
	// records is a no-op.
	Put(ctx context.Context, recs ...Record) error
	// Delete removes the records with these ids in one transaction; ids
	// that are not stored are ignored.
	Delete(ctx context.Context, ids ...string) error
	// Get returns the record with this id, or an error wrapping ErrNotFound
	// that names the id.
	Get(ctx context.Context, id string) (Record, error)
	// Scan calls fn for every record in SortKey order (numeric job order;
	// active and finished interleaved). fn runs with no lock held and may
	// use the spool; records written during the scan past the current
	// position are visited. fn's error stops the scan and is returned.
	Scan(ctx context.Context, fn func(Record) error) error
	// Purge deletes the finished records whose Finished time is before
	// before and returns how many it deleted.
	Purge(ctx context.Context, before time.Time) (int, error)
	// SetState durably stores a small piece of controller state under key
	// (e.g. which nodes an admin drained, the fair share usage); a nil
	// value deletes it. A value above MaxRecordSize fails with ErrTooLarge
	// and changes nothing.
	SetState(ctx context.Context, key string, value []byte) error
	// State returns what SetState stored under key, or nil.
	State(ctx context.Context, key string) ([]byte, error)
	// Close releases the spool; later calls fail with ErrClosed. Closing
	// twice is not an error.
	Close() error
}

var (
	// ErrNotFound: no record with that id.
	ErrNotFound = errors.New("job not in spool")
	// ErrClosed: the spool was closed.
	ErrClosed = errors.New("spool closed")
	// ErrBadID: the id is not a sharq job id.
	ErrBadID = errors.New("malformed job id")
	// ErrLocked: another process (controller) holds the spool.
	ErrLocked = errors.New("spool locked by another process")
	// ErrSchema: the spool file has an unknown or newer schema, or is not
	// a sharq spool.
	ErrSchema = errors.New("unsupported spool schema")
	// ErrCorrupt: a stored value does not decode.
	ErrCorrupt = errors.New("corrupt spool record")
	// ErrTooLarge: a record's data is larger than MaxRecordSize.
	ErrTooLarge = errors.New("job record too large")
	// ErrUnavailable: the store refuses writes or does not answer (an
	// etcd cluster without quorum or out of space); nothing was
	// acknowledged.
	ErrUnavailable = errors.New("spool unavailable")
)

// MaxRecordSize bounds a record's Data in every backend, so that a job one
// backend takes fits every other (etcd takes at most 1.5 MiB per request).
const MaxRecordSize = 1 << 20

// CheckSize fails with an error wrapping ErrTooLarge when r's data is above
// MaxRecordSize.
func CheckSize(r Record) error {
	if len(r.Data) > MaxRecordSize {
		return fmt.Errorf("spool: job %s: record of %d bytes is above the %d byte limit: %w", r.ID, len(r.Data), MaxRecordSize, ErrTooLarge)
	}
	return nil
}

// CheckStateSize fails with an error wrapping ErrTooLarge when a state
// value is above MaxRecordSize.
func CheckStateSize(key string, value []byte) error {
	if len(value) > MaxRecordSize {
		return fmt.Errorf("spool: state %s: value of %d bytes is above the %d byte limit: %w", key, len(value), MaxRecordSize, ErrTooLarge)
	}
	return nil
}

// scanPage is how many records Scan reads per transaction (or lock hold).
const scanPage = 1024

func checkN(n int) error {
	if n < 1 {
		return errors.New("spool: NextIDs: n must be >= 1")
	}
	return nil
}
