package noded

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-hpc/sharq/runtime"
)

// The runtime self-test. A start that fails through the node's container
// runtime (runtime.ErrRuntime: runc cannot create containers) makes the
// node suspect its runtime; while it does, sharqd starts a tiny container
// of its own (the image of the job that failed, `true` as nobody, no
// network, one CPU, 64 MiB, 16 processes: no more than any job gets) after
// a heartbeat interval, then twice as long each time it fails, at most
// every selfTestMax. One that runs and exits 0 ends the suspicion and
// counts in api.NodeMsg.SelfTests, which every heartbeat carries: the
// controller clears a RuntimeFailing drain when that count grows, so a
// node whose runtime is repaired takes jobs again within seconds, without
// a job's start as the test. A job that starts ends the suspicion too.

const (
	// selfTestID names the self-test's container. Job ids begin with a
	// digit, so it is never a job's; the node's listings leave it out.
	selfTestID = "selftest"
	// selfTestMax is the longest wait between two self-tests.
	selfTestMax = time.Minute
	// selfTestTimeout bounds one self-test, its clean-up included.
	selfTestTimeout = time.Minute
	// selfTestUID runs the self-test's process: nobody, as root-less as
	// a job.
	selfTestUID = 65534
)

// selfTest is the node's suspicion of its runtime and the self-tests it
// passed since sharqd started.
type selfTest struct {
	mu      sync.Mutex
	suspect bool
	image   string // of the last start that failed the node's way
	passed  atomic.Uint64
	wake    chan struct{} // one pending signal: a new suspicion
}

func newSelfTest() *selfTest { return &selfTest{wake: make(chan struct{}, 1)} }

// fail notes a start of image that failed through the runtime.
func (t *selfTest) fail(image string) {
	t.mu.Lock()
	t.suspect = true
	if image != "" {
		t.image = image
	}
	t.mu.Unlock()
	notify(t.wake)
}

// works notes a container that started: the runtime works.
func (t *selfTest) works() {
	t.mu.Lock()
	t.suspect = false
	t.mu.Unlock()
}

// pending returns the image to test with while the runtime is suspect.
func (t *selfTest) pending() (image string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.image, t.suspect
}

// watchRuntime runs self-tests while the runtime is suspect, the first
// after first, until ctx ends.
func (s *supervisor) watchRuntime(ctx context.Context, first time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.selfTest.wake:
		}
		for delay := first; ; delay = min(2*delay, selfTestMax) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			image, ok := s.selfTest.pending()
			if !ok {
				break
			}
			if err := s.runSelfTest(ctx, image); err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.Warn("container runtime self-test failed", "err", err, "next_in", min(2*delay, selfTestMax))
				continue
			}
			s.selfTest.works()
			n := s.selfTest.passed.Add(1)
			s.log.Info("container runtime self-test passed: the runtime starts containers again", "image", image, "passed", n)
			notify(s.health.changed) // a heartbeat with the news at once
			break
		}
	}
}

// runSelfTest starts, waits for and removes one self-test container.
func (s *supervisor) runSelfTest(ctx context.Context, image string) error {
	ctx, cancel := context.WithTimeout(ctx, selfTestTimeout)
	defer cancel()
	if image == "" {
		image = s.part.DefaultImage
	}
	s.removeSelfTest(ctx) // a leftover of a daemon that died during one
	spec := runtime.Spec{
		JobID: selfTestID, Node: s.node, Image: image, UID: selfTestUID, GID: selfTestUID,
		Args: []string{"true"}, Stdout: "/dev/null", Stderr: "/dev/null",
		CPUs: 1, Memory: 64 << 20, Pids: 16, Network: runtime.NetworkNone,
	}
	if err := s.rt.Start(ctx, spec); err != nil {
		s.removeSelfTest(ctx)
		return fmt.Errorf("node %s: self-test container of %s: %w", s.node, image, err)
	}
	status, err := s.rt.Wait(ctx, selfTestID)
	s.removeSelfTest(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("node %s: self-test container of %s: wait: %w", s.node, image, err)
	case status != 0:
		return fmt.Errorf("node %s: self-test container of %s: `true` exited %d", s.node, image, status)
	}
	return nil
}

// removeSelfTest stops and removes the self-test's container, if any.
func (s *supervisor) removeSelfTest(ctx context.Context) {
	if err := s.rt.Stop(ctx, selfTestID, 0); err == nil {
		s.rt.Wait(ctx, selfTestID)
	}
	if err := s.rt.Remove(ctx, selfTestID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
		s.log.Warn("cannot remove the self-test container", "err", err)
	}
}

// withoutSelfTest leaves the self-test's container out of a listing of
// the node's job containers.
func withoutSelfTest(tasks []runtime.Task) []runtime.Task {
	out := tasks[:0:0]
	for _, t := range tasks {
		if t.JobID != selfTestID {
			out = append(out, t)
		}
	}
	return out
}
