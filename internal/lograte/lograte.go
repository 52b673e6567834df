// Package lograte bounds how many lines a log message may write: what a
// remote peer can make a daemon log (a connection that never spoke, one
// closed to make room, a malformed request) would otherwise let anyone
// who can open connections write thousands of lines a second, filling
// the disk or making journald's own rate limit drop the daemon's other
// lines. The first Burst lines of each message in a window are written;
// the rest are counted, and the next line written says how many were
// dropped.
package lograte

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of a Limiter.
const (
	DefaultBurst  = 20
	DefaultWindow = 10 * time.Second
	// maxKeys bounds the messages a Limiter tracks; messages are
	// constants of the code, so this is a guard, not a limit reached.
	maxKeys = 256
)

// Limiter limits log lines per message. The zero value is not usable;
// make one with New.
type Limiter struct {
	burst  int
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	msgs map[string]*count
}

type count struct {
	start   time.Time // of the window
	written int       // lines written in the window
	dropped int       // lines dropped since the last one written
}

// New returns a Limiter of burst lines per message per window, reading
// the time from now (time.Now when nil).
func New(burst int, window time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{burst: max(burst, 1), window: window, now: now, msgs: map[string]*count{}}
}

// Allow says whether a line of msg may be written now and, when it may,
// how many lines of msg were dropped since the last one written.
func (l *Limiter) Allow(msg string) (ok bool, dropped int) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.msgs[msg]
	if c == nil {
		if len(l.msgs) >= maxKeys {
			return true, 0
		}
		c = &count{start: now}
		l.msgs[msg] = c
	}
	if now.Sub(c.start) >= l.window || now.Before(c.start) {
		c.start, c.written = now, 0
	}
	if c.written >= l.burst {
		c.dropped++
		return false, 0
	}
	c.written++
	dropped, c.dropped = c.dropped, 0
	return true, dropped
}

// Log writes msg at level on log unless msg has written its burst in
// this window; a line after dropped ones says how many (dropped=N).
func (l *Limiter) Log(log *slog.Logger, level slog.Level, msg string, args ...any) {
	ok, dropped := l.Allow(msg)
	if !ok {
		return
	}
	if dropped > 0 {
		args = append(args, "dropped", dropped)
	}
	log.Log(context.Background(), level, msg, args...)
}

// Warn is Log at slog.LevelWarn.
func (l *Limiter) Warn(log *slog.Logger, msg string, args ...any) {
	l.Log(log, slog.LevelWarn, msg, args...)
}
