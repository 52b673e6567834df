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
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/sharq-hpc/sharq/jobid"
)

// schemaVersion is the layout this package writes and understands:
// buckets meta (schema, next, walApplied), jobs (SortKey -> value),
// finished (finishedKey -> empty), state (key -> value).
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
	// keyApplied is the LSN of the last write-ahead log entry jobs.db
	// holds (absent: 0). A spool without it (written before the log) reads
	// as one with nothing logged.
	keyApplied = []byte("walApplied")
)

// Options tune Open.
type Options struct {
	// NoSync skips fsync on commit. Tests and benchmarks only: a crash
	// may lose acknowledged writes and reuse job numbers.
	NoSync bool
	// LockTimeout bounds the wait for the spool's flock; 0 means
	// DefaultLockTimeout.
	LockTimeout time.Duration

	limits walLimits // zero: defaultLimits (tests set small ones)
}

// walLimits say when a checkpoint is due: when the overlay holds more than
// entries records and state keys or bytes of data, or the log would grow
// past logSize.
type walLimits struct {
	entries int
	bytes   int
	logSize int64
}

// A checkpoint costs about 23 µs per record (BenchmarkCheckpoint), all in
// the write that triggers it: 2048 records keep that pause near 50 ms on a
// busy disk at no measurable cost per record over larger batches.
var defaultLimits = walLimits{entries: 2048, bytes: 8 << 20, logSize: 64 << 20}

// Bolt is the bbolt-backed Spool. Create it with Open.
//
// Writes go to the write-ahead log (one frame, one fdatasync) and into an
// in-memory overlay of jobs.db; a checkpoint commits the overlay into
// jobs.db in one bbolt transaction and starts the log over.
type Bolt struct {
	dir  string
	path string
	db   *bolt.DB
	lim  walLimits

	mu     sync.RWMutex // held shared by operations, exclusively by Close
	closed bool

	wmu     sync.Mutex // serializes writes: log appends, overlay changes, checkpoints
	wal     *walFile
	applied uint64 // LSN of the last log entry in jobs.db
	next    uint64 // NextIDs high-water mark, logged or in jobs.db
	broken  error  // set when the log or jobs.db failed a write; every later write fails

	omu sync.RWMutex // held exclusively to change ov, shared to read it
	ov  overlay
}

var _ Spool = (*Bolt)(nil)

// Open opens (creating if needed) the spool in dir: dir is created with mode
// 0700 and the files dir/jobs.db and dir/jobs.wal with 0600. The spool is
// locked exclusively; if another process holds it Open fails with an error
// wrapping ErrLocked after Options.LockTimeout. A file written by a newer
// schema fails with ErrSchema. Open replays the write-ahead log into
// jobs.db: a torn last entry (a write cut short by a crash, never
// acknowledged) is dropped with a warning; damage before the last entry
// fails with ErrCorrupt naming the offset.
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
	b := &Bolt{dir: dir, path: path, db: db, lim: opts.limits, ov: newOverlay()}
	if b.lim == (walLimits{}) {
		b.lim = defaultLimits
	}
	// jobs.db's flock covers the log too.
	if err := b.recover(opts.NoSync); err != nil {
		db.Close()
		return nil, fmt.Errorf("spool: open %s: %w", dir, err)
	}
	return b, nil
}

// recover opens the log and applies what jobs.db lacks of it.
func (b *Bolt) recover(noSync bool) error {
	err := b.db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		b.next = binary.BigEndian.Uint64(meta.Get(keyNext))
		switch v := meta.Get(keyApplied); len(v) {
		case 0:
		case 8:
			b.applied = binary.BigEndian.Uint64(v)
		default:
			return fmt.Errorf("applied log position of %d bytes: %w", len(v), ErrCorrupt)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w, buf, err := openWAL(filepath.Join(b.dir, WALName), noSync)
	if err != nil {
		return err
	}
	ops, err := readLog(w.path, buf, w.salt, b.applied, slog.Default())
	if err != nil {
		w.close()
		return err
	}
	w.lsn = b.applied
	for _, op := range ops {
		if err := b.ov.apply(op, &b.next); err != nil {
			w.close()
			return err
		}
		w.lsn = op.lsn
	}
	b.wal = w
	if len(ops) > 0 {
		slog.Info("spool: replayed the write-ahead log", "file", w.path, "entries", len(ops), "last", w.lsn)
		if err := b.checkpoint(); err != nil {
			w.close()
			return err
		}
	}
	return nil
}

// checkpoint commits the overlay and the logged NextIDs mark into jobs.db
// in one synced transaction, then empties the overlay and starts the log
// over. Killed before the commit, the log still holds every entry; after
// it, jobs.db says it holds them all, and reopening skips them. Called
// with wmu held (or during Open).
func (b *Bolt) checkpoint() error {
	if b.broken != nil {
		return b.broken
	}
	if b.wal.lsn == b.applied {
		return nil
	}
	lsn := b.wal.lsn
	if err := b.db.Update(func(tx *bolt.Tx) error { return b.ov.commit(context.Background(), tx, b.next, lsn) }); err != nil {
		b.broken = fmt.Errorf("spool: checkpoint into %s failed, reopen the spool: %w", b.path, err)
		return b.broken
	}
	b.omu.Lock()
	b.ov = newOverlay()
	b.omu.Unlock()
	b.applied = lsn
	b.wal.reset()
	return nil
}

// due reports whether the overlay is over its limits.
func (b *Bolt) due() bool {
	return b.ov.entries() > b.lim.entries || b.ov.bytes > b.lim.bytes
}

// write logs op and applies it to the overlay; a frame too large for the
// log (a Put or Delete of very many or large records) is committed to
// jobs.db directly after a checkpoint. Called with wmu held; op's slices
// are the spool's own.
func (b *Bolt) write(ctx context.Context, op walOp) error {
	if b.broken != nil {
		return b.broken
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	body := encodeBody(op)
	if len(body) > walMaxBody {
		return b.writeDirect(ctx, op)
	}
	if !b.wal.fits(frameHead+len(body), b.lim.logSize) {
		if err := b.checkpoint(); err != nil {
			return err
		}
	}
	if err := b.wal.append(body); err != nil {
		// After a failed write or fdatasync the log's content is unknown.
		b.broken = fmt.Errorf("%w (reopen the spool)", err)
		return b.broken
	}
	b.omu.Lock()
	err := b.ov.apply(op, &b.next)
	b.omu.Unlock()
	if err != nil {
		return err
	}
	if b.due() {
		return b.checkpoint()
	}
	return nil
}

// writeDirect commits a Put or Delete to jobs.db in its own synced
// transaction, after a checkpoint so that no overlay entry hides it.
func (b *Bolt) writeDirect(ctx context.Context, op walOp) error {
	if err := b.checkpoint(); err != nil {
		return err
	}
	o, next := newOverlay(), b.next
	if err := o.apply(op, &next); err != nil {
		return err
	}
	if err := b.db.Update(func(tx *bolt.Tx) error { return o.commit(ctx, tx, next, b.applied) }); err != nil {
		return err
	}
	b.next = next
	return nil
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
	b.wmu.Lock()
	defer b.wmu.Unlock()
	first := b.next
	if uint64(n) > jobid.MaxSeq-first {
		return 0, fmt.Errorf("spool: NextIDs(%d): job numbers exhausted at %d", n, first)
	}
	if err := b.write(ctx, walOp{kind: opNext, next: first + uint64(n)}); err != nil {
		return 0, err
	}
	return first, nil
}

// Put implements Spool.
func (b *Bolt) Put(ctx context.Context, recs ...Record) error {
	if len(recs) == 0 {
		return ctx.Err()
	}
	op := walOp{kind: opPut, recs: make([]walRec, len(recs))}
	for i, r := range recs {
		if _, err := SortKey(r.ID); err != nil {
			return err
		}
		if err := CheckSize(r); err != nil {
			return err
		}
		op.recs[i] = walRec{id: r.ID, val: encodeValue(r)}
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.write(ctx, op)
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
	for _, id := range ids {
		if _, err := SortKey(id); err != nil {
			return err
		}
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.write(ctx, walOp{kind: opDelete, ids: slices.Clone(ids)})
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
	b.omu.RLock()
	defer b.omu.RUnlock()
	if r, ok := b.ov.jobs[string(k)]; ok {
		if r.val == nil {
			return Record{}, fmt.Errorf("spool: job %s: %w", id, ErrNotFound)
		}
		return decodeValue(id, r.val)
	}
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
// calls fn outside of it; before each page it checkpoints the overlay's
// records, so that the page reads them from jobs.db.
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
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if len(b.ov.jobs) > 0 {
		if err := b.checkpoint(); err != nil {
			return err
		}
	}
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
	b.wmu.Lock()
	defer b.wmu.Unlock()
	// Purge works on jobs.db alone: what the log holds goes there first.
	if err := b.checkpoint(); err != nil {
		return 0, err
	}
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

// Close implements Spool. It waits for operations in progress and
// checkpoints the log.
func (b *Bolt) Close() error { return b.shut(true) }

// shut closes the files once, after operations in progress; with
// checkpoint it first commits the overlay (a failure is reported, and the
// log keeps the writes for the next Open).
func (b *Bolt) shut(checkpoint bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	b.wmu.Lock()
	defer b.wmu.Unlock()
	var errs []error
	if checkpoint {
		if err := b.checkpoint(); err != nil && b.wal.lsn != b.applied {
			errs = append(errs, err) // the log keeps the writes: the next Open applies them
		}
	}
	if err := b.wal.close(); err != nil {
		errs = append(errs, fmt.Errorf("spool: close %s: %w", b.wal.path, err))
	}
	if err := b.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("spool: close %s: %w", b.path, err))
	}
	return errors.Join(errs...)
}

// SetState implements Spool.
func (b *Bolt) SetState(ctx context.Context, key string, value []byte) error {
	if err := CheckStateSize(key, value); err != nil {
		return err
	}
	if key == "" || len(key) > maxStateKey {
		return fmt.Errorf("spool: state key of %d bytes: want 1 to %d", len(key), maxStateKey)
	}
	release, err := b.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	b.wmu.Lock()
	defer b.wmu.Unlock()
	return b.write(ctx, walOp{kind: opState, key: key, val: bytes.Clone(value)})
}

// State implements Spool.
func (b *Bolt) State(ctx context.Context, key string) ([]byte, error) {
	release, err := b.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	b.omu.RLock()
	defer b.omu.RUnlock()
	if v, ok := b.ov.state[key]; ok {
		return bytes.Clone(v.val), nil
	}
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

// abandon releases the files without a checkpoint, leaving them as a crash
// would (for tests of recovery).
func (b *Bolt) abandon() error { return b.shut(false) }
