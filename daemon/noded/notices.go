package noded

import (
	"fmt"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/session"
)

// liveSession is a session of a job, registered from its hello on (before
// its process runs), so that no notice for the job passes it by; what it
// is told waits for its Ready frame, which the client reads first.
type liveSession struct {
	w       *session.Writer
	primary bool
	run     int // the job's run it was granted for

	mu      sync.Mutex // orders the frames: Ready, then the notices
	ready   bool
	pending []string     // notices from before Ready
	late    *wallWarning // a walltime warning that was due before it connected
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

// start sends Ready, then a walltime warning that was due before the
// session connected, with the time left now (none once the walltime has
// passed: its stop notice follows), then the notices kept until now.
func (l *liveSession) start(r session.Ready) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.w.JSON(session.TypeReady, r); err != nil {
		return err
	}
	l.ready = true
	if wn := l.late; wn != nil {
		if left := time.Until(wn.end); left > 0 {
			l.w.Text(session.TypeNotice, walltimeWarning(r.Job, wn.wall, left))
		}
	}
	for _, t := range l.pending {
		l.w.Text(session.TypeNotice, t)
	}
	l.pending, l.late = nil, nil
	return nil
}

// wallWarning is a job run's walltime warning once it is due. Sessions
// that connect after it get it at once (liveSession.start), with the time
// then left: a qsub -I that attaches late, a qexec, a session after the
// node daemon restarted.
type wallWarning struct {
	run  int
	wall time.Duration
	end  time.Time
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

// register adds a session of job's run o.Run; a walltime warning of that
// run that is already due goes to it once it is ready.
func (s *sessions) register(job string, l *liveSession) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[job] == nil {
		s.live[job] = map[*liveSession]bool{}
	}
	s.live[job][l] = true
	if wn, ok := s.warned[job]; ok && wn.run == l.run {
		l.late = &wn
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

// warnWalltime records that the walltime warning of job's run is due
// (its walltime ends at end) and tells the job's live sessions, left
// before the end.
func (s *sessions) warnWalltime(job string, run int, wall, left time.Duration, end time.Time) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.warned[job] = wallWarning{run: run, wall: wall, end: end}
	ls := s.sessionsOf(job)
	s.mu.Unlock()
	text := walltimeWarning(job, wall, left)
	for _, l := range ls {
		if l.run == run {
			l.say(text)
		}
	}
}

// notice sends text to every live session of job.
func (s *sessions) notice(job, text string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	ls := s.sessionsOf(job)
	s.mu.Unlock()
	for _, l := range ls {
		l.say(text)
	}
}

// sessionsOf lists job's live sessions; s.mu held.
func (s *sessions) sessionsOf(job string) []*liveSession {
	ls := make([]*liveSession, 0, len(s.live[job]))
	for l := range s.live[job] {
		ls = append(ls, l)
	}
	return ls
}

// unwarn drops job's due walltime warning: the job is being stopped, and
// a session that connects now is not told of a walltime it will not reach.
func (s *sessions) unwarn(job string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.warned, job)
}

// forget drops what sessions keep of a job whose container is removed.
func (s *sessions) forget(job string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.warned, job)
	delete(s.primary, job)
}
