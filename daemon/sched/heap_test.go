package sched

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"
)

// hint is an int as a minHeap element.
type hint int

func (a hint) less(b hint) bool { return a < b }

func intHeap() *minHeap[hint] { return &minHeap[hint]{} }

// drain pops every element.
func drain(h *minHeap[hint]) []hint {
	var out []hint
	for h.len() > 0 {
		out = append(out, h.pop())
	}
	return out
}

func TestMinHeap(t *testing.T) {
	cases := []struct {
		name string
		run  func(h *minHeap[hint])
		want []hint
	}{
		{"empty", func(h *minHeap[hint]) {}, nil},
		{"push in order", func(h *minHeap[hint]) {
			for _, x := range []hint{1, 2, 3} {
				h.push(x)
			}
		}, []hint{1, 2, 3}},
		{"push reversed", func(h *minHeap[hint]) {
			for _, x := range []hint{5, 4, 3, 2, 1} {
				h.push(x)
			}
		}, []hint{1, 2, 3, 4, 5}},
		{"duplicates", func(h *minHeap[hint]) {
			for _, x := range []hint{2, 1, 2, 1, 0, 2} {
				h.push(x)
			}
		}, []hint{0, 1, 1, 2, 2, 2}},
		{"add then init", func(h *minHeap[hint]) {
			for _, x := range []hint{9, 3, 7, 1, 8} {
				h.add(x)
			}
			h.init()
		}, []hint{1, 3, 7, 8, 9}},
		{"fix top larger", func(h *minHeap[hint]) {
			for _, x := range []hint{1, 4, 6} {
				h.push(x)
			}
			h.items[0] = 5
			h.fix(0)
		}, []hint{4, 5, 6}},
		{"fix leaf smaller", func(h *minHeap[hint]) {
			for _, x := range []hint{1, 4, 6, 8} {
				h.push(x)
			}
			h.items[3] = 0
			h.fix(3)
		}, []hint{0, 1, 4, 6}},
		{"pop then push", func(h *minHeap[hint]) {
			for _, x := range []hint{3, 1, 2} {
				h.push(x)
			}
			h.pop()
			h.push(0)
		}, []hint{0, 2, 3}},
		{"clear", func(h *minHeap[hint]) {
			h.push(1)
			h.push(2)
			h.clear()
			h.push(7)
		}, []hint{7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := intHeap()
			c.run(h)
			if got := drain(h); !slices.Equal(got, c.want) {
				t.Errorf("popped %v, want %v", got, c.want)
			}
		})
	}
}

// refHeap is container/heap's view of a slice.
type refHeap []hint

func (h refHeap) Len() int           { return len(h) }
func (h refHeap) Less(a, b int) bool { return h[a] < h[b] }
func (h refHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *refHeap) Push(x any)        { *h = append(*h, x.(hint)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestMinHeapMatchesContainerHeap runs random operations on minHeap and on
// container/heap side by side: every pop must give the same element and
// the layouts must stay the same (minHeap keeps container/heap's
// algorithms, so the core's order of equal-key elements did not change
// when it replaced its hand-written heaps).
func TestMinHeapMatchesContainerHeap(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		h, ref := intHeap(), &refHeap{}
		elem := func() hint { return hint(r.IntN(20)) } // small range: many equal elements
		for step := 0; step < 400; step++ {
			switch op := r.IntN(10); {
			case op < 4:
				x := elem()
				h.push(x)
				heap.Push(ref, x)
			case op < 7 && h.len() > 0:
				if got, want := h.pop(), heap.Pop(ref).(hint); got != want {
					t.Fatalf("seed %d step %d: pop %d, container/heap %d", seed, step, got, want)
				}
			case op < 9 && h.len() > 0:
				i, x := r.IntN(h.len()), elem()
				h.items[i], (*ref)[i] = x, x
				h.fix(i)
				heap.Fix(ref, i)
			default:
				for range r.IntN(5) {
					x := elem()
					h.add(x)
					*ref = append(*ref, x)
				}
				h.init()
				heap.Init(ref)
			}
			if !slices.Equal(h.items, []hint(*ref)) {
				t.Fatalf("seed %d step %d: layout %v, container/heap %v", seed, step, h.items, *ref)
			}
		}
		want := slices.Sorted(slices.Values(h.items))
		if got := drain(h); !slices.Equal(got, want) {
			t.Fatalf("seed %d: drained %v, want %v", seed, got, want)
		}
	}
}
