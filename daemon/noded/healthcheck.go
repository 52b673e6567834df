package noded

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The node health program (`[runtime] health_check`, as Slurm's
// HealthCheckProgram or NHC): sharqd runs it at start, before its first
// hello, and every health_check_interval. A run that exits non-zero, is
// killed, cannot start or outlasts healthCheckTimeout makes the node
// unhealthy with the program's first output line as the reason
// ("HealthCheck: ..."): the controller places nothing there and shows the
// node `unhealthy` with it, while running jobs go on; the next run that
// exits 0 takes that reason back. It is the node's own health, apart from
// an admin's drain, which it never sets or clears.

const (
	// healthCheckTimeout bounds one run of the program (and its
	// interval, if shorter).
	healthCheckTimeout = 2 * time.Minute
	// healthCheckOutput bounds the output kept of one run.
	healthCheckOutput = 4096
	// maxHealthReason bounds the reason sent to the controller.
	maxHealthReason = 200
	// reasonHealthCheck starts the reason of a failed run.
	reasonHealthCheck = "HealthCheck: "
)

// healthCheck is the last run's verdict.
type healthCheck struct {
	mu  sync.Mutex
	why string // "" = passed (or no program)
}

func (h *healthCheck) get() string {
	if h == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.why
}

// set records the verdict and reports whether it changed.
func (h *healthCheck) set(why string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.why
	h.why = why
	return old != why
}

// nodeHealth is what the node says of its health (api.NodeMsg.Health):
// the runtime's problem, the health program's, or both.
func (s *supervisor) nodeHealth() string {
	rt, hc := s.health.get(), s.check.get()
	switch {
	case rt == "":
		return hc
	case hc == "":
		return rt
	}
	return rt + "; " + hc
}

// limitedBuffer keeps the first n bytes written to it and drops the rest.
type limitedBuffer struct {
	bytes.Buffer
	n int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.n - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// runHealthCheck runs prog once and returns why the node is unhealthy
// ("" = it exited 0).
func runHealthCheck(ctx context.Context, prog string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &limitedBuffer{n: healthCheckOutput}
	cmd := exec.CommandContext(ctx, prog)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second // a child that keeps the output open does not hold us
	err := cmd.Run()
	if err == nil {
		return ""
	}
	why := firstLine(out.Bytes())
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		why = fmt.Sprintf("%s timed out after %v", prog, timeout)
	case errors.As(err, &exit) && why == "":
		why = fmt.Sprintf("%s failed: %v", prog, exit)
	case !errors.As(err, &exit):
		why = fmt.Sprintf("%s cannot run: %v", prog, err)
	}
	return reasonHealthCheck + clipReason(why, maxHealthReason-len(reasonHealthCheck))
}

// firstLine is the first non-blank line of b, trimmed.
func firstLine(b []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, healthCheckOutput), healthCheckOutput)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			return l
		}
	}
	return ""
}

// clipReason makes s printable, valid UTF-8 and at most n bytes.
func clipReason(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// healthCheckOnce runs the program and records its verdict, sending a
// heartbeat at once when it changed.
func (s *supervisor) healthCheckOnce(ctx context.Context, prog string, timeout time.Duration) {
	why := runHealthCheck(ctx, prog, timeout)
	if ctx.Err() != nil {
		return // shutting down: no news
	}
	if !s.check.set(why) {
		return
	}
	if why != "" {
		s.log.Error("node health check failed: no new job here until it passes", "program", prog, "why", why)
	} else {
		s.log.Info("node health check passes again", "program", prog)
	}
	notify(s.health.changed)
}

// watchHealthCheck runs the program every interval until ctx ends (the
// first run is Run's, before the first hello).
func (s *supervisor) watchHealthCheck(ctx context.Context, prog string, interval time.Duration) {
	timeout := min(healthCheckTimeout, interval)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.healthCheckOnce(ctx, prog, timeout)
	}
}
