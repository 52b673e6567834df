package sim

import "time"

// evKind orders the events due at the same time: exits of finished jobs,
// then exits of preempted jobs, then exits of cancelled jobs, then
// submissions, then actions, then wake-ups.
type evKind uint8

const (
	evFinish evKind = iota // a running job's work is done: it exits
	evExit                 // a preempted job's grace time is over: it exits
	evKill                 // a cancelled running job's grace time is over: it exits
	evSubmit               // a job arrives
	evAction               // an action of the actions file (job is its index)
	evWake                 // the core's NextWake: a pass, as the controller runs one then
)

// event is a future happening on the virtual clock.
type event struct {
	t    time.Duration
	kind evKind
	job  int32  // index into the simulation's jobs (evAction: its actions)
	gen  uint32 // the job's run generation the event belongs to
	seq  uint64 // insertion order, the final tie-break
}

func (a *event) less(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

// eventQueue is a binary min-heap of events ordered by (t, kind, seq).
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) Len() int { return len(q.h) }

// peek returns the earliest event; the queue must not be empty.
func (q *eventQueue) peek() *event { return &q.h[0] }

func (q *eventQueue) push(e event) {
	e.seq = q.seq
	q.seq++
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].less(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.h[r].less(&q.h[l]) {
			m = r
		}
		if !q.h[m].less(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}
