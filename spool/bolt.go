package spool

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/sharq-hpc/sharq/jobid"
)

// schemaVersion is the layout this package writes and understands:
// buckets meta (schema, next), jobs (SortKey -> value), finished
// (finishedKey -> empty).
const schemaVersion = 1

// FileName is the spool file inside the spool directory.
const FileName = "jobs.db"

// DefaultLockTimeout is how long Open waits for another process's lock.
const DefaultLockTimeout = time.Second

var (
	bucketMeta     = []byte("meta")
	bucketJobs     = []byte("jobs")
	bucketFinished = []byte("finished")
	bucketState    = []byte("state")
	keySchema      = []byte("schema")
	keyNext        = []byte("next")
)

// Options tune Open.
type Options struct {
	// NoSync skips fsync on commit. Tests and benchmarks only: a crash
	// may lose acknowledged writes and reuse job numbers.
	NoSync bool
	// LockTimeout bounds the wait for the spool's flock; 0 means
	// DefaultLockTimeout.
	LockTimeout time.Duration
}

// Bolt is the bbolt-backed Spool. Create it with Open.
type Bolt struct {
	dir  string
	path string
	db   *bolt.DB

	mu     sync.RWMutex // held shared by operations, exclusively by Close
	closed bool
}

var _ Spool = (*Bolt)(nil)

// Open opens (creating if needed) the spool in dir: dir is created with mode
// 0700 and the file dir/jobs.db with 0600. The file is locked exclusively;
// if another process holds it Open fails with an error wrapping ErrLocked
// after Options.LockTimeout. A file written by a newer schema fails with
// ErrSchema.
func Open(dir string, opts Options) (*Bolt, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: create %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: timeout,
		NoSync:  opts.NoSync,
		// As etcd does: the freelist is rebuilt on open instead of being
		// written on every commit; crash safety is unaffected.
		FreelistType:   bolt.FreelistMapType,
		NoFreelistSync: true,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("spool: open %s: %w (is another sharqctld running on this spool_dir?)", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("spool: open %s: %w", path, err)
	}
	if err := db.Update(initSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("spool: open %s: %w", path, err)
	}
	return &Bolt{dir: dir, path: path, db: db}, nil
}

// initSchema creates the buckets of a new spool or checks an existing one.
func initSchema(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		empty := true
		tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if !empty {
			return fmt.Errorf("file has no schema version, not a sharq spool: %w", ErrSchema)
		}
		var err error
		if meta, err = tx.CreateBucket(bucketMeta); err != nil {
			return err
		}
		if err := meta.Put(keySchema, u64(schemaVersion)); err != nil {
			return err
		}
		if err := meta.Put(keyNext, u64(1)); err != nil {
			return err
		}
		if _, err := tx.CreateBucket(bucketJobs); err != nil {
			return err
		}
		_, err = tx.CreateBucket(bucketFinished)
		return err
	}
	v := meta.Get(keySchema)
	if len(v) != 8 {
		return fmt.Errorf("schema version missing or malformed: %w", ErrSchema)
	}
	switch ver := binary.BigEndian.Uint64(v); {
	case ver > schemaVersion:
		return fmt.Errorf("schema version %d was written by a newer sharq; this one knows up to %d: %w", ver, schemaVersion, ErrSchema)
	case ver < 1:
		return fmt.Errorf("schema version %d is invalid: %w", ver, ErrSchema)
	}
	if len(meta.Get(keyNext)) != 8 || tx.Bucket(bucketJobs) == nil || tx.Bucket(bucketFinished) == nil {
		return fmt.Errorf("schema %d layout incomplete: %w", schemaVersion, ErrCorrupt)
	}
	return nil
}

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// Dir returns the spool directory.
func (b *Bolt) Dir() string { return b.dir }

// Path returns the spool file's path.
func (b *Bolt) Path() string { return b.path }

// acquire checks ctx and the closed flag and holds the spool open until
// release is called.
func (b *Bolt) acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, ErrClosed
	}
	return b.mu.RUnlock, nil
}

// NextIDs implements Spool.
func (b *Bolt) NextIDs(ctx context.Context, n int) (uint64, error) {
	if err := checkN(n); err != nil {
		return 0, err
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	var first uint64
	err = b.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		first = binary.BigEndian.Uint64(meta.Get(keyNext))
		if uint64(n) > jobid.MaxSeq-first {
			return fmt.Errorf("spool: NextIDs(%d): job numbers exhausted at %d", n, first)
		}
		return meta.Put(keyNext, u64(first+uint64(n)))
	})
	if err != nil {
		return 0, err
	}
	return first, nil
}

type encoded struct {
	id       string
	key, val []byte
	finished time.Time
}

// Put implements Spool.
func (b *Bolt) Put(ctx context.Context, recs ...Record) error {
	if len(recs) == 0 {
		return ctx.Err()
	}
	enc := make([]encoded, len(recs))
	var maxNum uint64
	for i, r := range recs {
		k, err := SortKey(r.ID)
		if err != nil {
			return err
		}
		if err := CheckSize(r); err != nil {
			return err
		}
		if num := binary.BigEndian.Uint64(k); num > maxNum {
			maxNum = num
		}
		enc[i] = encoded{id: r.ID, key: k, val: encodeValue(r), finished: r.Finished}
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return b.db.Update(func(tx *bolt.Tx) error {
		jobs, fin := tx.Bucket(bucketJobs), tx.Bucket(bucketFinished)
		for i, e := range enc {
			if i%256 == 255 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := unindex(fin, e.id, e.key, jobs.Get(e.key)); err != nil {
				return err
			}
			if err := jobs.Put(e.key, e.val); err != nil {
				return fmt.Errorf("spool: put %s: %w", e.id, err)
			}
			if !e.finished.IsZero() {
				if err := fin.Put(finishedKey(e.finished, e.key), []byte{}); err != nil {
					return fmt.Errorf("spool: index %s: %w", e.id, err)
				}
			}
		}
		// Keep NextIDs above every stored job number.
		meta := tx.Bucket(bucketMeta)
		if next := binary.BigEndian.Uint64(meta.Get(keyNext)); maxNum >= next {
			return meta.Put(keyNext, u64(maxNum+1))
		}
		return nil
	})
}

// unindex removes the finished-index entry of the stored value old (nil if
// none) of the record id with key.
func unindex(fin *bolt.Bucket, id string, key, old []byte) error {
	if old == nil {
		return nil
	}
	t, err := decodeFinished(old)
	if err != nil {
		// The old finish time is unknown: drop every index entry of key so
		// that a corrupt record can still be replaced or deleted.
		slog.Warn("spool: replacing corrupt record", "job", id, "err", err)
		return unindexAll(fin, key)
	}
	if t.IsZero() {
		return nil
	}
	return fin.Delete(finishedKey(t, key))
}

// unindexAll removes all finished-index entries of key (a full index scan).
func unindexAll(fin *bolt.Bucket, key []byte) error {
	var stale [][]byte
	c := fin.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if len(k) >= 12 && bytes.Equal(k[12:], key) {
			stale = append(stale, bytes.Clone(k))
		}
	}
	for _, k := range stale {
		if err := fin.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Delete implements Spool.
func (b *Bolt) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return ctx.Err()
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		k, err := SortKey(id)
		if err != nil {
			return err
		}
		keys[i] = k
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return b.db.Update(func(tx *bolt.Tx) error {
		jobs, fin := tx.Bucket(bucketJobs), tx.Bucket(bucketFinished)
		for i, k := range keys {
			old := jobs.Get(k)
			if old == nil {
				continue
			}
			if err := unindex(fin, ids[i], k, old); err != nil {
				return err
			}
			if err := jobs.Delete(k); err != nil {
				return fmt.Errorf("spool: delete %s: %w", ids[i], err)
			}
		}
		return nil
	})
}

// Get implements Spool.
func (b *Bolt) Get(ctx context.Context, id string) (Record, error) {
	k, err := SortKey(id)
	if err != nil {
		return Record{}, err
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return Record{}, err
	}
	defer release()
	var r Record
	err = b.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketJobs).Get(k)
		if v == nil {
			return fmt.Errorf("spool: job %s: %w", id, ErrNotFound)
		}
		r, err = decodeValue(id, v)
		return err
	})
	return r, err
}

// Scan implements Spool. It reads scanPage records per read transaction and
// calls fn outside of it.
func (b *Bolt) Scan(ctx context.Context, fn func(Record) error) error {
	var after []byte // key of the last record visited; nil before the first
	page := make([]Record, 0, scanPage)
	for {
		page = page[:0]
		err := b.scanPage(ctx, after, &page)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		for _, r := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		after, _ = SortKey(page[len(page)-1].ID)
	}
}

// scanPage appends to page up to scanPage records following key after.
func (b *Bolt) scanPage(ctx context.Context, after []byte, page *[]Record) error {
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return b.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketJobs).Cursor()
		var k, v []byte
		if after == nil {
			k, v = c.First()
		} else {
			k, v = c.Seek(after)
			if k != nil && bytes.Equal(k, after) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(*page) < scanPage; k, v = c.Next() {
			id, err := idFromKey(k)
			if err != nil {
				return err
			}
			r, err := decodeValue(id, v)
			if err != nil {
				return err
			}
			*page = append(*page, r)
		}
		return nil
	})
}

// Purge implements Spool.
func (b *Bolt) Purge(ctx context.Context, before time.Time) (int, error) {
	release, err := b.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	var n int
	err = b.db.Update(func(tx *bolt.Tx) error {
		jobs, fin := tx.Bucket(bucketJobs), tx.Bucket(bucketFinished)
		var idx [][]byte
		c := fin.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			t, _, err := splitFinishedKey(k)
			if err != nil {
				return err
			}
			if !t.Before(before) {
				break
			}
			idx = append(idx, bytes.Clone(k))
		}
		for i, k := range idx {
			if i%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			_, key, _ := splitFinishedKey(k)
			if err := jobs.Delete(key); err != nil {
				return err
			}
			if err := fin.Delete(k); err != nil {
				return err
			}
		}
		n = len(idx)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("spool: purge before %s: %w", before.Format(time.RFC3339), err)
	}
	return n, nil
}

// Close implements Spool. It waits for operations in progress.
func (b *Bolt) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("spool: close %s: %w", b.path, err)
	}
	return nil
}

// SetState implements Spool.
func (b *Bolt) SetState(ctx context.Context, key string, value []byte) error {
	if err := CheckStateSize(key, value); err != nil {
		return err
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return b.db.Update(func(tx *bolt.Tx) error {
		st, err := tx.CreateBucketIfNotExists(bucketState)
		if err != nil {
			return err
		}
		if value == nil {
			return st.Delete([]byte(key))
		}
		return st.Put([]byte(key), value)
	})
}

// State implements Spool.
func (b *Bolt) State(ctx context.Context, key string) ([]byte, error) {
	release, err := b.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	var out []byte
	err = b.db.View(func(tx *bolt.Tx) error {
		if st := tx.Bucket(bucketState); st != nil {
			if v := st.Get([]byte(key)); v != nil {
				out = bytes.Clone(v)
			}
		}
		return nil
	})
	return out, err
}
