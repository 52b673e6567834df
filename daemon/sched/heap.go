package sched

// minHeap is the core's one priority queue: a binary min-heap of T ordered
// by T's less method; the zero value is an empty heap. It holds the begin
// times (scheduler.go), the shares of a pass (pass.go) and the users of a
// share's merged cursor (usercursor.go).
//
// Its algorithms are container/heap's (the same sift up and down, the same
// swaps), without the interface and the boxing of Push and Pop's any. Every
// element type's less is a strict order up to elements that are alike, so
// the order in which elements come out does not depend on the layout; the
// layout is container/heap's all the same.
//
// An element's order must not change while it is in the heap but through
// fix; callers that order by a computed key keep the key in the element.
type minHeap[T lesser[T]] struct {
	items []T
}

// lesser is an element of a minHeap: a.less(b) says whether a comes before
// b.
type lesser[T any] interface {
	less(T) bool
}

func (h *minHeap[T]) len() int { return len(h.items) }

// top is the least element; the heap must not be empty.
func (h *minHeap[T]) top() T { return h.items[0] }

// clear empties the heap, keeping its memory.
func (h *minHeap[T]) clear() {
	clear(h.items)
	h.items = h.items[:0]
}

// add appends x without ordering it: call init before the heap is used
// again (cheaper than push for a batch).
func (h *minHeap[T]) add(x T) { h.items = append(h.items, x) }

// init orders the elements (container/heap.Init).
func (h *minHeap[T]) init() {
	n := len(h.items)
	for i := n/2 - 1; i >= 0; i-- {
		h.down(i, n)
	}
}

// push adds x (container/heap.Push).
func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

// pop removes and returns the least element (container/heap.Pop); the
// heap must not be empty.
func (h *minHeap[T]) pop() T {
	n := len(h.items) - 1
	h.items[0], h.items[n] = h.items[n], h.items[0]
	h.down(0, n)
	x := h.items[n]
	var zero T
	h.items[n] = zero // no reference kept past the length
	h.items = h.items[:n]
	return x
}

// fix restores the order after the element at i changed
// (container/heap.Fix).
func (h *minHeap[T]) fix(i int) {
	if !h.down(i, len(h.items)) {
		h.up(i)
	}
}

func (h *minHeap[T]) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.items[j].less(h.items[i]) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		j = i
	}
}

// down sifts the element at i0 down among the first n; whether it moved.
func (h *minHeap[T]) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h.items[j2].less(h.items[j1]) {
			j = j2 // right child
		}
		if !h.items[j].less(h.items[i]) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		i = j
	}
	return i > i0
}
