package noded

import (
	"fmt"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/session"
)

// maxNotices bounds the notices kept of one run for sessions that connect
// later (a run gets a walltime warning and a stop or two; more are still
// sent to the sessions connected then).
const maxNotices = 16

// liveSession is a session of a job, registered from its hello on (before
// its process runs), so that no notice for the job passes it by; what it
// is told waits for its Ready frame, which the client reads first.
type liveSession struct {
	w       *session.Writer
	primary bool
	run     int // the job's run it was granted for

	mu      sync.Mutex // orders the frames: Ready, then the notices
	ready   bool
	late    []notice // the run's notices from before it registered
	stopped bool     // the run was stopped before it registered
	pending []string // notices from its registration to Ready
}

// notice is one notice of a run, as its sessions connected then were told.
type notice struct {
	text string
	warn *wallWarning // set on the walltime warning
}

// wallWarning is what a walltime warning says, so that a session that
// gets it late is told the time then left.
type wallWarning struct {
	wall time.Duration
	end  time.Time
}

// runNotices is what the sessions of a job's run have been told, in
// order, for the sessions that connect later: a qsub -I that attaches
// after the job started, a qexec, a session after the node daemon
// restarted (which re-arms the walltime warning).
type runNotices struct {
	run     int
	said    []notice
	stopped bool // the run is being stopped: its walltime warning is history
}

// say sends a notice, or keeps it until Ready is sent.
func (l *liveSession) say(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ready {
		l.pending = append(l.pending, text)
		return
	}
	l.w.Text(session.TypeNotice, text)
}

// start sends Ready, then every notice of the run from before the session
// registered, as the sessions connected then got them, then those kept
// since: a late session is told what an on-time one was, in order, once.
// The one exception is a walltime warning that is still the run's last
// word (no stop, no later notice) with time left: it says the time left
// now rather than then.
func (l *liveSession) start(r session.Ready) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.JSON(session.TypeReady, r); err != nil {
		return err
	}
	l.ready = true
	for i, n := range l.late {
		text := n.text
		if n.warn != nil && i == len(l.late)-1 && len(l.pending) == 0 && !l.stopped {
			if left := time.Until(n.warn.end); left > 0 {
				text = walltimeWarning(r.Job, n.warn.wall, left)
			}
		}
		l.w.Text(session.TypeNotice, text)
	}
	for _, t := range l.pending {
		l.w.Text(session.TypeNotice, t)
	}
	l.pending, l.late = nil, nil
	return nil
}

// walltimeWarning is the warning's text.
func walltimeWarning(job string, wall, left time.Duration) string {
	if left >= time.Second {
		left = left.Round(time.Second)
	} else {
		left = left.Round(time.Millisecond)
	}
	return fmt.Sprintf("job %s reaches its walltime (%v) in %v: it is stopped then", job, wall, left)
}

// register adds a session of job's run l.run; the run's notices so far
// go to it once it is ready.
func (s *sessions) register(job string, l *liveSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[job] == nil {
		s.live[job] = map[*liveSession]bool{}
	}
	s.live[job][l] = true
	if rn := s.told[job]; rn != nil && rn.run == l.run {
		l.late = append([]notice(nil), rn.said...)
		l.stopped = rn.stopped
	}
}

// unregister removes a session added by register.
func (s *sessions) unregister(job string, l *liveSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live[job], l)
	if len(s.live[job]) == 0 {
		delete(s.live, job)
	}
}

// tell sends n to the live sessions of job's run and keeps it for those
// that connect later. The supervisor calls it on the job's serial, so
// that the run's notices reach every session in one order.
func (s *sessions) tell(job string, run int, n notice) {
	if s == nil {
		return
	}
	s.mu.Lock()
	rn := s.runOf(job, run)
	if len(rn.said) < maxNotices {
		rn.said = append(rn.said, n)
	}
	ls := s.sessionsOf(job)
	s.mu.Unlock()
	for _, l := range ls {
		if l.run == run {
			l.say(n.text)
		}
	}
}

// warnWalltime tells job's run's sessions that its walltime (wall, which
// ends at end) is reached in left.
func (s *sessions) warnWalltime(job string, run int, wall, left time.Duration, end time.Time) {
	s.tell(job, run, notice{text: walltimeWarning(job, wall, left), warn: &wallWarning{wall: wall, end: end}})
}

// notice tells job's run's sessions text.
func (s *sessions) notice(job string, run int, text string) {
	s.tell(job, run, notice{text: text})
}

// stopping records that job's run is being stopped (whether or not its
// sessions were told why): a session that connects now gets its walltime
// warning as it was sent, not with a walltime the run will not reach.
func (s *sessions) stopping(job string, run int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runOf(job, run).stopped = true
}

// runOf is what job's run was told, started afresh for a new run; s.mu
// held.
func (s *sessions) runOf(job string, run int) *runNotices {
	rn := s.told[job]
	if rn == nil || rn.run != run {
		rn = &runNotices{run: run}
		s.told[job] = rn
	}
	return rn
}

// sessionsOf lists job's live sessions; s.mu held.
func (s *sessions) sessionsOf(job string) []*liveSession {
	ls := make([]*liveSession, 0, len(s.live[job]))
	for l := range s.live[job] {
		ls = append(ls, l)
	}
	return ls
}

// forget drops what sessions keep of a job whose container is removed.
func (s *sessions) forget(job string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.told, job)
	delete(s.primary, job)
}
