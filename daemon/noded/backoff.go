package noded

import (
	"hash/fnv"
	"math/rand/v2"
	"time"
)

// Reconnection delays when Options leave them zero.
const (
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	// haMaxBackoff caps the delay with several controllers (HA): the next
	// leader is up within seconds of a failover.
	haMaxBackoff = 2 * time.Second
)

// backoff gives growing, capped, jittered delays between reconnections.
// Its random source is seeded from the node name: the delays are the same
// from run to run for one node, and differ between nodes, so a cluster's
// daemons do not all reconnect at the same instant after a controller
// restart.
type backoff struct {
	min, max, cur time.Duration
	rng           *rand.Rand
}

func newBackoff(node string, lo, hi time.Duration) *backoff {
	if lo <= 0 {
		lo = DefaultMinBackoff
	}
	if hi <= 0 {
		hi = DefaultMaxBackoff
	}
	hi = max(hi, lo)
	h := fnv.New64a()
	h.Write([]byte(node))
	seed := h.Sum64()
	return &backoff{min: lo, max: hi, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// next is the delay before the next attempt: the current step, doubled each
// time up to max, less a random part of up to half of it.
func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	half := b.cur / 2
	return b.cur - time.Duration(b.rng.Int64N(int64(half)+1))
}

// reset starts over from min, after a connection that was welcomed.
func (b *backoff) reset() { b.cur = 0 }
