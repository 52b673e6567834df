package noded

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	const lo, hi = 100 * time.Millisecond, 2 * time.Second
	seq := func(node string, n int) []time.Duration {
		b := newBackoff(node, lo, hi)
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = b.next()
		}
		return out
	}
	a, again, other := seq("gpu01", 12), seq("gpu01", 12), seq("gpu02", 12)
	differs := false
	for i := range a {
		if a[i] != again[i] {
			t.Fatalf("delay %d: %v then %v for the same node", i, a[i], again[i])
		}
		differs = differs || a[i] != other[i]
		step := min(lo<<i, hi)
		if a[i] < step/2 || a[i] > step {
			t.Errorf("delay %d = %v, want within [%v, %v]", i, a[i], step/2, step)
		}
	}
	if !differs {
		t.Error("two nodes got the same delays")
	}
	b := newBackoff("gpu01", lo, hi)
	for range 10 {
		b.next()
	}
	b.reset()
	if d := b.next(); d > lo {
		t.Errorf("after reset: %v, want at most %v", d, lo)
	}
	if d := newBackoff("x", 0, 0).next(); d > DefaultMinBackoff || d < DefaultMinBackoff/2 {
		t.Errorf("defaults: first delay %v", d)
	}
}
