package spool

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// overlay holds the writes that are in the log but not yet checkpointed
// into jobs.db; reads look here first. Writers change it with Bolt.wmu and
// Bolt.omu held; readers hold omu shared.
type overlay struct {
	jobs  map[string]walRec  // SortKey -> record; a nil val is a deletion
	state map[string]ovState // state key -> value
	bytes int                // data held, for the checkpoint trigger
}

type ovState struct {
	val []byte // nil when deleted
}

func newOverlay() overlay {
	return overlay{jobs: map[string]walRec{}, state: map[string]ovState{}}
}

func (o *overlay) entries() int { return len(o.jobs) + len(o.state) }

// apply adds a logged op; next is the NextIDs high-water mark, raised by
// Put and NextIDs ops.
func (o *overlay) apply(op walOp, next *uint64) error {
	switch op.kind {
	case opPut:
		for _, r := range op.recs {
			k, err := SortKey(r.id)
			if err != nil {
				return err
			}
			o.jobs[string(k)] = r
			o.bytes += len(k) + len(r.val)
			if num := binary.BigEndian.Uint64(k); num >= *next {
				*next = num + 1
			}
		}
	case opDelete:
		for _, id := range op.ids {
			k, err := SortKey(id)
			if err != nil {
				return err
			}
			o.jobs[string(k)] = walRec{id: id}
			o.bytes += len(k)
		}
	case opState:
		o.state[op.key] = ovState{val: op.val}
		o.bytes += len(op.key) + len(op.val)
	case opNext:
		*next = max(*next, op.next)
	default:
		return fmt.Errorf("spool: apply op kind %d: %w", op.kind, ErrCorrupt)
	}
	return nil
}

// commit writes the overlay into tx with next and the applied LSN. ctx
// is checked every 256 records (a checkpoint passes one that never ends).
func (o *overlay) commit(ctx context.Context, tx *bolt.Tx, next, applied uint64) error {
	jobs, fin := tx.Bucket(bucketJobs), tx.Bucket(bucketFinished)
	// In key order: bbolt fills its pages best that way.
	for i, k := range slices.Sorted(maps.Keys(o.jobs)) {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r := o.jobs[k]
		if r.val == nil {
			if err := txDelete(jobs, fin, r.id, []byte(k)); err != nil {
				return err
			}
			continue
		}
		if err := txPut(jobs, fin, r.id, []byte(k), r.val); err != nil {
			return err
		}
	}
	if len(o.state) > 0 {
		st, err := tx.CreateBucketIfNotExists(bucketState)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(o.state)) {
			if v := o.state[k].val; v == nil {
				err = st.Delete([]byte(k))
			} else {
				err = st.Put([]byte(k), v)
			}
			if err != nil {
				return fmt.Errorf("spool: state %s: %w", k, err)
			}
		}
	}
	return setMark(tx, next, applied)
}

// setMark stores the NextIDs high-water mark (never lowering it) and the
// LSN of the last log entry jobs.db holds.
func setMark(tx *bolt.Tx, next, applied uint64) error {
	meta := tx.Bucket(bucketMeta)
	if cur := binary.BigEndian.Uint64(meta.Get(keyNext)); next > cur {
		if err := meta.Put(keyNext, u64(next)); err != nil {
			return err
		}
	}
	return meta.Put(keyApplied, u64(applied))
}

// txPut stores one record's value under key, keeping the finished index.
func txPut(jobs, fin *bolt.Bucket, id string, key, val []byte) error {
	if err := unindex(fin, id, key, jobs.Get(key)); err != nil {
		return err
	}
	if err := jobs.Put(key, val); err != nil {
		return fmt.Errorf("spool: put %s: %w", id, err)
	}
	t, err := decodeFinished(val)
	if err != nil {
		return fmt.Errorf("spool: put %s: %w", id, err)
	}
	if !t.IsZero() {
		if err := fin.Put(finishedKey(t, key), []byte{}); err != nil {
			return fmt.Errorf("spool: index %s: %w", id, err)
		}
	}
	return nil
}

// txDelete removes the record under key if there is one.
func txDelete(jobs, fin *bolt.Bucket, id string, key []byte) error {
	old := jobs.Get(key)
	if old == nil {
		return nil
	}
	if err := unindex(fin, id, key, old); err != nil {
		return err
	}
	if err := jobs.Delete(key); err != nil {
		return fmt.Errorf("spool: delete %s: %w", id, err)
	}
	return nil
}
