package ctld

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/spool"
)

// op is one unit of work for the loop. fn runs on the loop goroutine; done
// is closed once fn's effects are durable in the spool, unless fn set hold
// (qsub -W block), in which case the loop closes it later.
type op struct {
	fn   func()
	done chan struct{}
	hold bool
	err  error // set before done is closed when fn's effects are not durable
	// reply, when set, is the client's answer, which the loop writes once
	// fn's effects are durable (reply.go).
	reply *reply
}

// outMsg is a message to a node daemon, sent after the spool write.
type outMsg struct {
	node string
	msg  api.NodeMsg
}

const maxBatch = 8192

// do runs fn on the loop and waits until its effects are durable.
func (c *Controller) do(ctx context.Context, fn func()) error {
	o := &op{fn: fn, done: make(chan struct{})}
	select {
	case c.ops <- o:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-o.done:
		return o.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// post queues fn without waiting (node messages).
func (c *Controller) post(ctx context.Context, fn func()) {
	select {
	case c.ops <- &op{fn: fn}:
	case <-ctx.Done():
	}
}

// loop owns all state. Each turn applies a batch of operations, runs a
// scheduling pass when something changed, writes the changed jobs in one
// synced transaction, and then answers and sends orders.
func (c *Controller) loop(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	// wake fires at the next begin time (qsub -a) the core holds, so such
	// jobs start on time without a scan of every job.
	wake := time.NewTimer(time.Hour)
	defer wake.Stop()
	c.needPass = true
	for {
		if err := c.turn(); err != nil {
			return err
		}
		wake.Reset(c.untilWake())
		var batch []*op
		select {
		case <-ctx.Done():
			return nil
		case o := <-c.ops:
			batch = append(batch, o)
		case <-tick.C:
			c.tick()
		case <-wake.C:
			c.needPass = true
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case o := <-c.ops:
				batch = append(batch, o)
			default:
				break drain
			}
		}
		panicked := false
		for _, o := range batch {
			if o.fn != nil && c.runOp(o) {
				panicked = true
			}
			if o.done != nil && !o.hold {
				c.release = append(c.release, o)
			}
		}
		if panicked {
			if err := c.flush(); err != nil {
				return c.spoolFailed(err)
			}
			if err := c.rebuild(); err != nil {
				return err
			}
		}
	}
}

// turn runs the pass and flushes. A spool failure is fatal: the controller
// stops rather than acknowledge what it could not persist; a restart
// recovers from the spool.
func (c *Controller) turn() error {
	if c.needPass {
		c.pass()
	}
	if err := c.flush(); err != nil {
		return c.spoolFailed(err)
	}
	return nil
}

// errNotDurable answers the requests of a turn whose spool write failed.
var errNotDurable = errors.New("the controller could not write its spool and is stopping: the request was not acknowledged")

// spoolFailed stops the controller: the waiting callers are answered (as
// failed: done without their effects durable) and the error is returned.
func (c *Controller) spoolFailed(err error) error {
	for _, o := range c.release {
		o.err = fmt.Errorf("%w: %v", errNotDurable, err) // says why (e.g. etcd without quorum)
		close(o.done)
	}
	c.release = nil
	c.met.spoolErrors.Inc()
	return fmt.Errorf("spool write failed, stopping: %w", err)
}

// flush persists dirty jobs, then releases answers and sends node orders.
func (c *Controller) flush() error {
	if len(c.dirty) > 0 {
		recs := make([]spool.Record, 0, len(c.dirty))
		for id := range c.dirty {
			j, ok := c.jobs[id]
			if !ok {
				continue
			}
			rec, err := j.record()
			if err != nil {
				return fmt.Errorf("job %s: %w", id, err)
			}
			recs = append(recs, rec)
		}
		// Not ctx: a write that has begun finishes even while stopping.
		start := time.Now()
		if err := c.sp.Put(bgctx, recs...); err != nil {
			return err
		}
		c.met.spoolWrite.Observe(time.Since(start).Seconds())
		clear(c.dirty)
	}
	for _, o := range c.release {
		if o.reply != nil {
			sendReply(o)
		}
		close(o.done)
	}
	c.release = c.release[:0]
	// A leader that cannot be sure its lease is alive (it was paused, or
	// etcd is silent) sends no order: a newer leader may already run.
	if c.lead != nil && len(c.outbox) > 0 && !c.lead.Valid() {
		c.outbox = c.outbox[:0]
		return fmt.Errorf("%w: orders not sent", errNotValid)
	}
	for _, m := range c.outbox {
		if n := c.nodes[m.node]; n != nil && n.conn != nil {
			n.conn.send(m.msg)
		}
	}
	c.outbox = c.outbox[:0]
	return nil
}

// tick handles time: node heartbeats, begin times, history purge.
func (c *Controller) tick() {
	now := c.now()
	c.checkNodes(now)
	if c.leaseKept > c.jobLease() && !now.Before(c.leaseFloor) {
		// No node holds the longer lease any more.
		if err := c.keepLease(bgctx, c.jobLease()); err != nil {
			c.log.Error("record the job lease", "err", err)
		}
	}
	if t, ok := c.core.NextWake(); ok && !now.Before(t) {
		c.needPass = true
	}
	if now.Sub(c.lastPurge) > time.Hour {
		c.purge(now)
	}
	if now.Sub(c.lastJobMetrics) >= jobMetricsEvery {
		c.updateJobMetrics(now)
	}
	if c.hist != nil && now.Sub(c.lastSample) >= c.cfg.Accounting.SampleInterval {
		c.sampleShares(now)
	}
	if now.Sub(c.lastUsageSave) >= usageSaveEvery {
		if err := c.saveUsage(); err != nil {
			c.log.Error("save fair share usage", "err", err)
		}
	}
}

func (c *Controller) markDirty(id string) { c.dirty[id] = true }

func (c *Controller) sendNode(node string, m api.NodeMsg) {
	m.V = api.NodeVersion
	c.outbox = append(c.outbox, outMsg{node: node, msg: m})
}

// bgctx is the context of spool calls made from the loop itself.
var bgctx = context.Background()

// untilWake is how long until the core's next begin time (an hour when
// none; the tick covers a clock that is not the wall clock).
func (c *Controller) untilWake() time.Duration {
	t, ok := c.core.NextWake()
	if !ok {
		return time.Hour
	}
	return max(t.Sub(c.now()), 0)
}

// purge drops finished jobs older than the configured history.
func (c *Controller) purge(now time.Time) {
	c.lastPurge = now
	keep := c.cfg.Cluster.History
	if keep <= 0 {
		return
	}
	before := now.Add(-keep)
	if c.hist != nil {
		lost := 0
		for _, j := range c.jobs {
			if j.finished() && j.EndTime.Before(before) && !j.Acct.Recorded {
				lost++
			}
		}
		if lost > 0 {
			c.log.Error("job history: purging finished jobs the history never got (unreachable longer than the spool keeps jobs)",
				"jobs", lost, "history", keep)
		}
	}
	n, err := c.sp.Purge(bgctx, before)
	if err != nil {
		c.log.Error("purge history", "err", err)
		return
	}
	var gone []sched.JobID
	for id, j := range c.jobs {
		if j.finished() && j.EndTime.Before(before) {
			delete(c.jobs, id)
			gone = append(gone, sched.JobID(id))
		}
	}
	if len(gone) > 0 {
		// The core would keep how they ended for as long as it runs.
		if err := c.core.Apply(sched.Forgotten{IDs: gone}); err != nil {
			c.coreRefused("purge history: the core kept the purged jobs' outcomes", "err", err)
		}
	}
	if n > 0 {
		c.log.Info("purged finished jobs", "count", n, "older_than", keep)
	}
}
