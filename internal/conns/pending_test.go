package conns

import (
	"errors"
	"slices"
	"testing"
)

// TestPending: idle slots are evicted oldest first, per key before in all;
// settled slots are never evicted; a refusal comes only when nothing idle
// is left to evict; Release after an eviction gives nothing back twice.
func TestPending(t *testing.T) {
	p := NewPending("connections without hello", 2, 3)
	var evicted []string
	admit := func(key, name string) (*Slot, []string, error) {
		return p.Admit(key, func() { evicted = append(evicted, name) })
	}
	a1, _, err1 := admit("a", "a1")
	a2, _, err2 := admit("a", "a2")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	// a's two slots are full: a3 takes a1's.
	a3, keys, err := admit("a", "a3")
	if err != nil || !slices.Equal(evicted, []string{"a1"}) || !slices.Equal(keys, []string{"a"}) {
		t.Fatalf("a3: %v, evicted %v, keys %v", err, evicted, keys)
	}
	a1.Release() // its goroutine's late release frees nothing
	if p.Held("a") != 2 || p.Total() != 2 {
		t.Fatalf("after a1's late release: a holds %d, %d in all", p.Held("a"), p.Total())
	}
	// b gets the third slot; c finds all 3 taken and evicts the oldest
	// idle one of all, a2.
	b1, _, err := admit("b", "b1")
	if err != nil {
		t.Fatal(err)
	}
	a2.Settle() // a2 speaks: it is no longer evictable, a3 is the oldest idle
	c1, _, err := admit("c", "c1")
	if err != nil || !slices.Equal(evicted, []string{"a1", "a3"}) {
		t.Fatalf("c1: %v, evicted %v", err, evicted)
	}
	// a holds one settled slot; settle everything and nothing can be freed.
	b1.Settle()
	c1.Settle()
	a3.Release()
	if p.Total() != 3 {
		t.Fatalf("%d slots in all, want 3", p.Total())
	}
	_, _, err = admit("d", "d1")
	var el *ErrLimit
	if !errors.As(err, &el) || el.Max != 3 || err.Error() != "too many connections without hello in all (at most 3 at once): close some and retry" {
		t.Fatalf("nothing idle left: %v, evicted %v", err, evicted)
	}
	if !slices.Equal(evicted, []string{"a1", "a3"}) {
		t.Fatalf("refusal evicted %v", evicted)
	}
	a2.Release()
	b1.Release()
	if _, _, err := admit("d", "d2"); err != nil {
		t.Fatal(err)
	}
	c1.Release()
	if p.Held("a") != 0 || p.Held("b") != 0 || p.Total() != 1 {
		t.Fatalf("a %d b %d total %d", p.Held("a"), p.Held("b"), p.Total())
	}
}

// TestPendingPerKeySettled: a key whose slots are all settled is refused,
// with its own key in the error.
func TestPendingPerKeySettled(t *testing.T) {
	p := NewPending("connections without hello", 1, 10)
	s, _, err := p.Admit("a", func() {})
	if err != nil {
		t.Fatal(err)
	}
	s.Settle()
	_, _, err = p.Admit("a", func() { t.Error("evicted a settled slot") })
	var el *ErrLimit
	if !errors.As(err, &el) || el.Key != "a" || el.Max != 1 || err.Error() != "too many connections without hello from a (at most 1 at once): close some and retry" {
		t.Fatalf("%v", err)
	}
	if _, _, err := p.Admit("b", func() {}); err != nil {
		t.Fatal(err)
	}
}
