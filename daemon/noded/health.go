package noded

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The node's health is whether its container runtime answers. An
// unhealthy node keeps its connection and heartbeats, saying why in each
// (api.NodeMsg.Health), so the controller places nothing there and shows
// the reason instead of sending jobs that fail; a start order that arrives
// meanwhile fails with NodeFault, and the controller requeues the job
// without counting it as the job's failure. Running containers are not
// touched: their shims outlive containerd, and the waits resume when it is
// back. A hello made while the containers cannot be listed says so
// (Unlisted); once the runtime answers again the node says hello again
// with the complete list, and re-adopts its containers if it could not at
// start.

// healthTimeout bounds one probe of the runtime.
const healthTimeout = 5 * time.Second

// health is the node's present health.
type health struct {
	mu  sync.Mutex
	why string // "" = healthy
	// changed wakes the writer to send a heartbeat with the news at once
	// (and to say hello again if the last hello could not list the
	// containers); it holds one pending signal.
	changed chan struct{}
}

func newHealth() *health { return &health{changed: make(chan struct{}, 1)} }

func (h *health) get() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.why
}

// set records why ("" = healthy) and reports whether it changed.
func (h *health) set(why string) bool {
	h.mu.Lock()
	old := h.why
	h.why = why
	h.mu.Unlock()
	if old == why {
		return false
	}
	notify(h.changed)
	return true
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// probe asks the runtime and records the answer.
func (s *supervisor) probe(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	why := ""
	if err := s.rt.Health(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return s.health.get() // shutting down: no news
		}
		why = "container runtime unavailable: " + err.Error()
	}
	if s.health.set(why) {
		if why != "" {
			s.log.Error("node unhealthy: no job can start here until the runtime answers", "why", why)
		} else {
			s.log.Info("node healthy again: the container runtime answers")
		}
	}
	return why
}

// watchHealth probes the runtime every interval until ctx ends, and
// re-adopts the node's containers once the runtime answers if adopted
// says that has not been done yet.
func (s *supervisor) watchHealth(ctx context.Context, interval time.Duration, adopted bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if s.probe(ctx) == "" && !adopted {
			if err := s.adopt(); err != nil {
				s.log.Error("cannot re-adopt the node's containers yet", "err", err)
			} else {
				adopted = true
				s.adopted.Store(true)
				notify(s.health.changed) // a session waiting to say hello again may now
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
