package spool

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/jobid"
)

// Memory is an in-memory Spool with the same semantics as Bolt, minus
// durability. The zero value is not usable; use NewMemory.
type Memory struct {
	mu     sync.Mutex
	recs   map[string]Record // by string(SortKey)
	keys   []string          // sorted SortKeys of recs
	next   uint64
	state  map[string][]byte
	closed bool
}

var _ Spool = (*Memory)(nil)

// NewMemory returns an empty in-memory spool.
func NewMemory() *Memory {
	return &Memory{recs: make(map[string]Record), next: 1, state: make(map[string][]byte)}
}

func (m *Memory) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// NextIDs implements Spool.
func (m *Memory) NextIDs(ctx context.Context, n int) (uint64, error) {
	if err := checkN(n); err != nil {
		return 0, err
	}
	if err := m.lock(ctx); err != nil {
		return 0, err
	}
	defer m.mu.Unlock()
	first := m.next
	if uint64(n) > jobid.MaxSeq-first {
		return 0, fmt.Errorf("spool: NextIDs(%d): job numbers exhausted at %d", n, first)
	}
	m.next += uint64(n)
	return first, nil
}

// Put implements Spool.
func (m *Memory) Put(ctx context.Context, recs ...Record) error {
	if len(recs) == 0 {
		return ctx.Err()
	}
	keys := make([]string, len(recs))
	for i, r := range recs {
		k, err := SortKey(r.ID)
		if err != nil {
			return err
		}
		if err := CheckSize(r); err != nil {
			return err
		}
		keys[i] = string(k)
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	for i, r := range recs {
		k := keys[i]
		if _, ok := m.recs[k]; !ok {
			pos, _ := slices.BinarySearch(m.keys, k)
			m.keys = slices.Insert(m.keys, pos, k)
		}
		m.recs[k] = cloneRecord(r)
		if num := binary.BigEndian.Uint64([]byte(k)); num >= m.next {
			m.next = num + 1
		}
	}
	return nil
}

func cloneRecord(r Record) Record {
	r.Data = append(make([]byte, 0, len(r.Data)), r.Data...)
	if !r.Finished.IsZero() {
		r.Finished = r.Finished.UTC()
	}
	return r
}

// Delete implements Spool.
func (m *Memory) Delete(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return ctx.Err()
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		k, err := SortKey(id)
		if err != nil {
			return err
		}
		keys[i] = string(k)
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	for _, k := range keys {
		m.remove(k)
	}
	return nil
}

func (m *Memory) remove(k string) {
	if _, ok := m.recs[k]; !ok {
		return
	}
	delete(m.recs, k)
	if pos, ok := slices.BinarySearch(m.keys, k); ok {
		m.keys = slices.Delete(m.keys, pos, pos+1)
	}
}

// Get implements Spool.
func (m *Memory) Get(ctx context.Context, id string) (Record, error) {
	k, err := SortKey(id)
	if err != nil {
		return Record{}, err
	}
	if err := m.lock(ctx); err != nil {
		return Record{}, err
	}
	defer m.mu.Unlock()
	r, ok := m.recs[string(k)]
	if !ok {
		return Record{}, fmt.Errorf("spool: job %s: %w", id, ErrNotFound)
	}
	return cloneRecord(r), nil
}

// Scan implements Spool, with Bolt's paging semantics.
func (m *Memory) Scan(ctx context.Context, fn func(Record) error) error {
	var after string
	first := true
	page := make([]Record, 0, scanPage)
	for {
		if err := m.lock(ctx); err != nil {
			return err
		}
		pos := 0
		if !first {
			var found bool
			pos, found = slices.BinarySearch(m.keys, after)
			if found {
				pos++
			}
		}
		page = page[:0]
		for _, k := range m.keys[pos:min(pos+scanPage, len(m.keys))] {
			page = append(page, cloneRecord(m.recs[k]))
		}
		if len(page) > 0 {
			after = m.keys[pos+len(page)-1]
		}
		m.mu.Unlock()
		if len(page) == 0 {
			return nil
		}
		first = false
		for _, r := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	}
}

// Purge implements Spool.
func (m *Memory) Purge(ctx context.Context, before time.Time) (int, error) {
	if err := m.lock(ctx); err != nil {
		return 0, err
	}
	defer m.mu.Unlock()
	n := 0
	kept := m.keys[:0]
	for _, k := range m.keys {
		r := m.recs[k]
		if !r.Finished.IsZero() && r.Finished.Before(before) {
			delete(m.recs, k)
			n++
			continue
		}
		kept = append(kept, k)
	}
	clear(m.keys[len(kept):])
	m.keys = kept
	return n, nil
}

// Close implements Spool.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.recs, m.keys = nil, nil
	return nil
}

// SetState implements Spool.
func (m *Memory) SetState(ctx context.Context, key string, value []byte) error {
	if err := CheckStateSize(key, value); err != nil {
		return err
	}
	if err := m.lock(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if value == nil {
		delete(m.state, key)
	} else {
		m.state[key] = bytes.Clone(value)
	}
	return nil
}

// State implements Spool.
func (m *Memory) State(ctx context.Context, key string) ([]byte, error) {
	if err := m.lock(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	return bytes.Clone(m.state[key]), nil
}
