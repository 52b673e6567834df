package sched

// A share's queue is one queue per user when the share has per-user rules
// (limits, or fair share among its users), else one queue for all. A pass
// walks it with a merged cursor: the users' queues merged by queue order,
// or, for a share with FairShareUsers under fair share, by priority, then
// the user's fair key (fairshare.go), then queue order. A user at a limit
// is dropped from the merge for the rest of the pass after a few of its
// jobs got the limit's reason, so a user's thousand jobs at its limit do
// not keep the pass from the jobs of other users behind them.

// shareQueue is a share's queue of jobs that may start.
type shareQueue struct {
	perUser bool                  // one queue per user
	byUser  map[string]*userQueue // key: the user, or "" when !perUser
}

type userQueue struct {
	user string
	q    queue
}

func (sq *shareQueue) key(j *job) string {
	if sq.perUser {
		return j.User
	}
	return ""
}

func (sq *shareQueue) insert(j *job) {
	if sq.byUser == nil {
		sq.byUser = map[string]*userQueue{}
	}
	k := sq.key(j)
	uq := sq.byUser[k]
	if uq == nil {
		uq = &userQueue{user: k}
		sq.byUser[k] = uq
	}
	uq.q.insert(j)
}

// remove takes j out; its sort key must be the one it was inserted with.
// It must not run while a cursor walks the queue (a pass defers it).
func (sq *shareQueue) remove(j *job) bool {
	k := sq.key(j)
	uq := sq.byUser[k]
	if uq == nil || !uq.q.remove(j) {
		return false
	}
	if uq.q.n == 0 {
		delete(sq.byUser, k)
	}
	return true
}

// userLimitMarks is how many jobs of a user at a limit a pass gives the
// limit's reason before it passes over the user's other jobs.
const userLimitMarks = 16

// ucur is one user's position in a merged cursor.
type ucur struct {
	uq    *userQueue
	c     cursor
	key   float64 // the user's fair key (fair merges only)
	fair  bool    // the cursor's fair, for less
	marks int     // jobs given a user limit's reason in this pass
}

// mcursor walks a share's queue in merged order; the queue must not change
// meanwhile.
type mcursor struct {
	h     minHeap[*ucur] // the users with jobs left, by their current job
	pool  []ucur         // what h points into
	fair  bool
	stale bool // a start changed some user's key: recompute them all
}

// firstCursor positions a share's cursor on its first job (reusing the
// last pass's memory).
func (s *Scheduler) firstCursor(sh *share) {
	m := &sh.cur
	m.fair, m.stale = s.cfg.FairShare && sh.cfg.FairShareUsers && sh.q.perUser, false
	m.h.clear()
	if n := len(sh.q.byUser); cap(m.pool) < n {
		m.pool = make([]ucur, n)
	}
	m.pool = m.pool[:0]
	for _, uq := range sh.q.byUser {
		c := uq.q.first()
		if !c.valid() {
			continue
		}
		m.pool = append(m.pool, ucur{uq: uq, c: c, fair: m.fair})
		u := &m.pool[len(m.pool)-1]
		if m.fair {
			u.key = s.userKey(sh, uq.user)
		}
		m.h.add(u)
	}
	m.h.init()
}

func (m *mcursor) valid() bool { return m.h.len() > 0 }
func (m *mcursor) job() *job   { return m.h.top().c.job() }
func (m *mcursor) top() *ucur  { return m.h.top() }

// next moves past the current job.
func (m *mcursor) next() {
	t := m.h.top()
	t.c.next()
	if !t.c.valid() {
		m.dropTop()
		return
	}
	m.h.fix(0)
}

// dropTop passes over the rest of the current user's jobs.
func (m *mcursor) dropTop() { m.h.pop() }

// refix re-reads the users' fair keys after starts: the current user's,
// or every user's when a job of another user started.
func (s *Scheduler) refix(sh *share) {
	m := &sh.cur
	if !m.fair || m.h.len() == 0 {
		return
	}
	if m.stale {
		m.stale = false
		for _, u := range m.h.items {
			u.key = s.userKey(sh, u.uq.user)
		}
		m.h.init()
		return
	}
	t := m.h.top()
	t.key = s.userKey(sh, t.uq.user)
	m.h.fix(0)
}

// less orders the users of a merged cursor by their current jobs.
func (a *ucur) less(b *ucur) bool {
	x, y := a.c.job(), b.c.job()
	if a.fair {
		if x.Priority != y.Priority {
			return x.Priority > y.Priority
		}
		if a.key != b.key {
			return a.key < b.key
		}
	}
	return queueLess(x, y)
}
