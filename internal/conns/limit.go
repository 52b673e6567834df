package conns

import (
	"fmt"
	"sync"
)

// Limiter caps how many connections each key (a uid, a remote address)
// holds at once. The zero value is not usable; see NewLimiter.
type Limiter struct {
	what string
	max  int
	mu   sync.Mutex
	n    map[string]int
}

// ErrLimit is the error of a refused Acquire.
type ErrLimit struct {
	What string // e.g. "connections of uid"
	Key  string
	Max  int
}

func (e *ErrLimit) Error() string {
	return fmt.Sprintf("too many %s %s (at most %d at once): close some and retry", e.What, e.Key, e.Max)
}

// NewLimiter allows max connections per key; what names them in errors
// ("connections of uid").
func NewLimiter(what string, max int) *Limiter {
	return &Limiter{what: what, max: max, n: map[string]int{}}
}

// Acquire takes one slot of key. On success release gives it back (once;
// later calls do nothing); over the cap it returns an *ErrLimit.
func (l *Limiter) Acquire(key string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key] >= l.max {
		return nil, &ErrLimit{What: l.what, Key: key, Max: l.max}
	}
	l.n[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.n[key]--; l.n[key] <= 0 {
				delete(l.n, key)
			}
		})
	}, nil
}

// Held is how many slots key holds.
func (l *Limiter) Held(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[key]
}
