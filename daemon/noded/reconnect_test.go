//go:build !unit

package noded_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/runtime"
)

// heldStart is the real containerd runtime whose Start waits, once it is
// called, until the test lets it go: a container start slowed down as on
// a loaded node.
type heldStart struct {
	runtime.Runtime
	called  chan struct{}
	release chan struct{}
}

func (h *heldStart) Start(ctx context.Context, s runtime.Spec) error {
	close(h.called)
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.Runtime.Start(ctx, s)
}

// TestHelloDuringStart: the controller goes away (a restart, a failover)
// while the node makes a job's container; the node's next hello lists the
// run as running, neither missing (the controller would requeue it) nor
// ended (the runtime lists a container being made as lost), and the
// start's own report follows on the new connection.
func TestHelloDuringStart(t *testing.T) {
	e := newEnv(t)
	held := &heldStart{Runtime: e.runtime(t, "n1"), called: make(chan struct{}), release: make(chan struct{})}
	e.run(t, "n1", func(o *noded.Options) { o.Runtime = held })
	p1 := e.ctl.accept(t)
	o := e.order(t, "90.t", "echo start >> starts\nsleep 30\n")
	p1.start(t, o)
	select {
	case <-held.called:
	case <-time.After(waitLimit):
		t.Fatal("the start order did not reach the runtime")
	}
	p1.conn.Close()

	p2 := e.ctl.accept(t)
	if !slices.Contains(p2.hello.Running, api.RunningJob{JobID: o.Job.ID, Run: 0}) {
		t.Errorf("hello during the start lists %+v, want %s running", p2.hello.Running, o.Job.ID)
	}
	close(held.release)
	p2.state(t, o.Job.ID, "running")
	awaitFile(t, e.workFile(o.Job.ID, "starts"))
}
