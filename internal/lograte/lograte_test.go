package lograte

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestAllow(t *testing.T) {
	type step struct {
		advance time.Duration
		msg     string
		ok      bool
		dropped int
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"burst then dropped", []step{{0, "a", true, 0}, {0, "a", true, 0}, {0, "a", false, 0}, {time.Second, "a", false, 0}}},
		{"the next window says how many were dropped", []step{
			{0, "a", true, 0}, {0, "a", true, 0}, {0, "a", false, 0}, {0, "a", false, 0}, {0, "a", false, 0},
			{10 * time.Second, "a", true, 3}, {0, "a", true, 0}, {0, "a", false, 0},
			{10 * time.Second, "a", true, 1}}},
		{"messages are apart", []step{{0, "a", true, 0}, {0, "a", true, 0}, {0, "a", false, 0}, {0, "b", true, 0}, {0, "b", true, 0}}},
		{"a clock that goes back starts a window", []step{{0, "a", true, 0}, {0, "a", true, 0}, {0, "a", false, 0}, {-time.Hour, "a", true, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t: time.Unix(1e9, 0)}
			l := New(2, 10*time.Second, c.now)
			for i, s := range tc.steps {
				c.add(s.advance)
				ok, dropped := l.Allow(s.msg)
				if ok != s.ok || dropped != s.dropped {
					t.Fatalf("step %d (%+v): Allow = %v, %d", i, s, ok, dropped)
				}
			}
		})
	}
}

// TestKeysBounded: past maxKeys messages, new ones are written, not
// tracked.
func TestKeysBounded(t *testing.T) {
	l := New(1, time.Minute, nil)
	for i := range maxKeys + 10 {
		if ok, _ := l.Allow(strings.Repeat("x", i+1)); !ok {
			t.Fatalf("message %d refused", i)
		}
	}
	if len(l.msgs) != maxKeys {
		t.Fatalf("%d messages tracked, want %d", len(l.msgs), maxKeys)
	}
	untracked := strings.Repeat("x", maxKeys+5)
	for range 3 {
		if ok, _ := l.Allow(untracked); !ok {
			t.Fatal("an untracked message was dropped")
		}
	}
}

// TestWarn: a flood of one message writes its burst, and the first line
// after it says how many were dropped.
func TestWarn(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	c := &clock{t: time.Unix(1e9, 0)}
	l := New(DefaultBurst, DefaultWindow, c.now)
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				l.Warn(log, "node connection without hello", "remote", "127.0.0.2:1")
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(buf.String(), "\n"); n != DefaultBurst {
		t.Fatalf("%d lines of 1000, want %d", n, DefaultBurst)
	}
	c.add(DefaultWindow)
	buf.Reset()
	l.Warn(log, "node connection without hello", "remote", "127.0.0.2:1")
	if got := buf.String(); !strings.Contains(got, "dropped=980") || !strings.Contains(got, "level=WARN") {
		t.Fatalf("line after the flood: %q", got)
	}
}
