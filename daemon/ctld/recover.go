package ctld

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/daemon/schedconf"
)

// A panic while handling one request or one node message must not take
// the controller down, and must not leave in memory a half-applied change
// that the spool does not have. The rule (see doc.go and SECURITY.md):
//
//  1. The panicking operation is recovered on the loop; its caller gets an
//     internal error, never a success.
//  2. The rest of the batch goes on as usual and the turn's flush writes
//     every job marked changed, so whatever was acknowledged is durable.
//  3. The controller then drops its in-memory state and rebuilds it from
//     the spool (as a restart would, without leaving its sockets): jobs and
//     the core come back exactly as written, node connections are closed so
//     that each node says hello again and is reconciled against the spool.
//
// So after a panic memory equals the spool, nothing acknowledged is lost,
// and the one request that hit the bug fails (what it changed and marked
// before the panic may have been written with the batch). Panics outside
// operations (the scheduling pass, the spool write) still stop the process:
// they are not one request's, and a restart recovers from the spool.

// errPanicked is what do returns for an operation that panicked.
var errPanicked = errors.New("internal error while handling the request (logged by the controller); it failed, though part of it may have been applied: check with qstat")

// runOp runs o.fn, recovering a panic. It reports whether fn panicked.
func (c *Controller) runOp(o *op) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic while handling a request: rebuilding state from the spool", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			o.err, o.hold = errPanicked, false
			panicked = true
		}
	}()
	o.fn()
	return false
}

// rebuild replaces the in-memory state by the spool's, after a panic. The
// caller has flushed.
func (c *Controller) rebuild() error {
	for _, n := range c.nodes {
		if n.conn != nil {
			n.conn.close()
		}
	}
	if err := c.saveUsage(); err != nil { // the new core restores it
		c.log.Error("save fair share usage before the rebuild", "err", err)
	}
	core, err := sched.New(schedconf.Config(c.cfg))
	if err != nil {
		return fmt.Errorf("rebuild after a panic: %w", err)
	}
	c.core = core
	c.jobs, c.nodes, c.dirty = map[string]*job{}, map[string]*node{}, map[string]bool{}
	c.userBytes = map[uint32]int64{}
	c.userJobs = map[userShare]int{}
	c.requestIDs = newRequestIDs()
	c.outbox = c.outbox[:0]
	if err := c.restore(bgctx); err != nil {
		return fmt.Errorf("rebuild after a panic: %w", err)
	}
	c.needPass = true
	return nil
}

// handleSafe is handle for a connection's goroutine: a panic outside the
// loop (decoding, a request that does not reach the loop) fails the one
// request instead of the process.
func (c *Controller) handleSafe(ctx context.Context, id Identity, req *api.Request) (resp *api.Response) {
	defer func() {
		if r := recover(); r != nil {
			var op api.Op
			if req != nil {
				op = req.Op
			}
			c.log.Error("panic while handling a request", "uid", id.UID, "op", op, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			resp = &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: errPanicked.Error()}}
		}
	}()
	return c.handle(ctx, id, req)
}

// survive ends a connection's goroutine quietly on a panic (node
// connections: the node reconnects and says hello again).
func (c *Controller) survive(what string) {
	if r := recover(); r != nil {
		c.log.Error("panic on a connection: closed", "conn", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}
