package conns

import (
	"container/list"
	"sync"
)

// Pending bounds the connections that have not authenticated yet (per key,
// a remote address, and in all) without letting whoever holds them keep
// anyone else out: when a new connection finds its key's slots or all the
// slots taken, the oldest connection still idle (one that has not sent
// anything valid, see Slot.Settle) of that key, else of all, is closed to
// make room, as sshd's MaxStartups drops unauthenticated connections. A
// flood of idle connections thus costs its sender its own older ones, and a
// peer that speaks at once (a node's hello, a client's credential) gets
// through however many idle connections others hold. A new connection is
// refused only when every slot holds a connection that is being checked,
// which lasts as long as one check does.
type Pending struct {
	what          string
	perKey, total int

	mu    sync.Mutex
	idle  *list.List            // of *Slot, oldest first: evictable
	byKey map[string]*list.List // of *Slot per key, oldest first: evictable
	held  map[string]int        // slots per key, idle or settled
	n     int                   // slots in all
}

// Slot is one connection's place in a Pending.
type Slot struct {
	p        *Pending
	key      string
	evict    func()
	all, own *list.Element // nil once settled or released
	done     bool
}

// NewPending allows perKey idle connections per key and total in all; what
// names them in errors ("client connections without a credential").
func NewPending(what string, perKey, total int) *Pending {
	return &Pending{what: what, perKey: perKey, total: total,
		idle: list.New(), byKey: map[string]*list.List{}, held: map[string]int{}}
}

// Admit takes a slot for a new connection from key; evict closes the
// connection (its goroutine then sees its reads fail and calls Release) and
// is called, outside the Pending's lock, if the slot is taken from it while
// idle. Admit returns the names of the slots it evicted for the caller to
// log, and an *ErrLimit when no slot could be freed.
func (p *Pending) Admit(key string, evict func()) (*Slot, []string, error) {
	p.mu.Lock()
	var victims []*Slot
	if p.held[key] >= p.perKey {
		l := p.byKey[key]
		if l == nil || l.Len() == 0 {
			p.mu.Unlock()
			return nil, nil, &ErrLimit{What: p.what + " from", Key: key, Max: p.perKey}
		}
		victims = append(victims, p.dropLocked(l.Front().Value.(*Slot)))
	}
	if p.n >= p.total {
		if p.idle.Len() == 0 {
			p.mu.Unlock()
			for _, v := range victims {
				v.evict()
			}
			return nil, nil, &ErrLimit{What: p.what, Key: "in all", Max: p.total}
		}
		victims = append(victims, p.dropLocked(p.idle.Front().Value.(*Slot)))
	}
	s := &Slot{p: p, key: key, evict: evict}
	s.all = p.idle.PushBack(s)
	l := p.byKey[key]
	if l == nil {
		l = list.New()
		p.byKey[key] = l
	}
	s.own = l.PushBack(s)
	p.held[key]++
	p.n++
	p.mu.Unlock()
	keys := make([]string, len(victims))
	for i, v := range victims {
		keys[i] = v.key
		v.evict()
	}
	return s, keys, nil
}

// dropLocked frees s's slot as an eviction.
func (p *Pending) dropLocked(s *Slot) *Slot {
	p.unlinkLocked(s)
	p.freeLocked(s)
	return s
}

func (p *Pending) unlinkLocked(s *Slot) {
	if s.all == nil {
		return
	}
	p.idle.Remove(s.all)
	l := p.byKey[s.key]
	l.Remove(s.own)
	if l.Len() == 0 {
		delete(p.byKey, s.key)
	}
	s.all, s.own = nil, nil
}

func (p *Pending) freeLocked(s *Slot) {
	if s.done {
		return
	}
	s.done = true
	p.n--
	if p.held[s.key]--; p.held[s.key] <= 0 {
		delete(p.held, s.key)
	}
}

// Settle marks the connection as having sent something valid (a complete
// credential, a hello) that is now being checked: it keeps its slot until
// Release and is no longer evicted.
func (s *Slot) Settle() {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.p.unlinkLocked(s)
}

// Release gives the slot back (once; later calls, and calls after the slot
// was evicted, do nothing).
func (s *Slot) Release() {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.p.unlinkLocked(s)
	s.p.freeLocked(s)
}

// Held is how many slots key holds.
func (p *Pending) Held(key string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held[key]
}

// Total is how many slots are held in all.
func (p *Pending) Total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}
