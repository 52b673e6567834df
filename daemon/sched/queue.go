package sched

import "sort"

// queue is a share's queue of jobs that may start, kept sorted by
// (priority desc, order desc, seq asc, pending subjobs before their
// array's remaining indices, index, id). It is a list of sorted chunks, so that inserting or
// removing one of 100,000 jobs costs a binary search and a short copy.
type queue struct {
	chunks [][]*job
	n      int
}

const queueChunk = 256

// queueLess is the queue order.
func queueLess(a, b *job) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.Order != b.Order {
		return a.Order > b.Order
	}
	if pa, pb := a.place(), b.place(); pa != pb {
		return pa < pb
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	ap, bp := a.arr != nil, b.arr != nil
	if ap != bp {
		return bp // a subjob entry goes before its array's remaining indices
	}
	if a.index != b.index {
		return a.index < b.index
	}
	return a.ID < b.ID
}

func (q *queue) chunkFor(j *job) int {
	ci := sort.Search(len(q.chunks), func(i int) bool {
		c := q.chunks[i]
		return !queueLess(c[len(c)-1], j)
	})
	if ci == len(q.chunks) {
		ci = len(q.chunks) - 1
	}
	return ci
}

func (q *queue) insert(j *job) {
	q.n++
	if len(q.chunks) == 0 {
		q.chunks = append(q.chunks, []*job{j})
		return
	}
	ci := q.chunkFor(j)
	c := q.chunks[ci]
	pos := sort.Search(len(c), func(i int) bool { return queueLess(j, c[i]) })
	c = append(c, nil)
	copy(c[pos+1:], c[pos:])
	c[pos] = j
	if len(c) > 2*queueChunk {
		right := append([]*job(nil), c[queueChunk:]...)
		c = c[:queueChunk:queueChunk]
		q.chunks = append(q.chunks, nil)
		copy(q.chunks[ci+2:], q.chunks[ci+1:])
		q.chunks[ci+1] = right
	}
	q.chunks[ci] = c
}

// remove takes j out; its sort key must be the one it was inserted with.
func (q *queue) remove(j *job) bool {
	if len(q.chunks) == 0 {
		return false
	}
	ci := q.chunkFor(j)
	c := q.chunks[ci]
	pos := sort.Search(len(c), func(i int) bool { return !queueLess(c[i], j) })
	if pos >= len(c) || c[pos] != j {
		return false
	}
	copy(c[pos:], c[pos+1:])
	c[len(c)-1] = nil
	c = c[:len(c)-1]
	if len(c) == 0 {
		q.chunks = append(q.chunks[:ci], q.chunks[ci+1:]...)
	} else {
		q.chunks[ci] = c
	}
	q.n--
	return true
}

// cursor walks a queue in order; the queue must not change meanwhile.
type cursor struct {
	q     *queue
	ci, i int
}

func (q *queue) first() cursor { return cursor{q: q} }

func (c *cursor) valid() bool { return c.q != nil && c.ci < len(c.q.chunks) }
func (c *cursor) job() *job   { return c.q.chunks[c.ci][c.i] }
func (c *cursor) next() {
	c.i++
	if c.i >= len(c.q.chunks[c.ci]) {
		c.ci++
		c.i = 0
	}
}
