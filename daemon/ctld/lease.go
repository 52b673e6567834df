package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Job leases, the controller's side (the node's: daemon/noded/lease.go).
// Every answer to a node acknowledges the node's last message (Ack) and
// grants job_lease (Lease): the node's jobs run at most job_lease past the
// instant it sent that message, which comes before the controller heard it
// (node.lastSeen). A node silent for node_timeout is marked down: it is
// drained in the core (nothing new goes there) and its jobs stay running,
// with reason NodeUnreachable, until lastSeen + job_lease + leaseMargin;
// only then does the core requeue them (sched.NodeDown), when the node has
// surely stopped them. A node that says hello before keeps its jobs.

// setJobLease installs job_lease (at New and at every reload). A shorter
// one than before does not shorten what nodes already hold: until the old
// lease has run out from now, a silent node's jobs wait for it.
func (c *Controller) setJobLease(d time.Duration) {
	if old := time.Duration(c.jobLeaseNs.Load()); d < old {
		if until := c.now().Add(old); until.After(c.leaseFloor) {
			c.leaseFloor = until
		}
	}
	c.jobLeaseNs.Store(int64(d))
}

// leaseKey is where the spool keeps the longest job lease a node may still
// hold, so that a restarted controller (or the next leader) waits for it
// even when job_lease was shortened meanwhile.
const leaseKey = "job-lease"

// leaseRecord is leaseKey's value.
type leaseRecord struct {
	Lease time.Duration `json:"lease_ns"`
}

// restoreLease reads the longest lease granted before this controller
// started: nodes may hold it until that long after the start. Runs in restore,
// before any node is served.
func (c *Controller) restoreLease(ctx context.Context) error {
	b, err := c.sp.State(ctx, leaseKey)
	if err != nil {
		return fmt.Errorf("spool state %s: %w", leaseKey, err)
	}
	if b != nil {
		var r leaseRecord
		if err := json.Unmarshal(b, &r); err != nil || r.Lease < 0 {
			return fmt.Errorf("spool state %s: %q is not a job lease", leaseKey, b)
		}
		c.leaseKept = r.Lease
		if until := c.startedAt.Add(r.Lease); r.Lease > c.jobLease() && until.After(c.leaseFloor) {
			c.leaseFloor = until
		}
	}
	return c.keepLease(ctx, c.jobLease())
}

// keepLease records in the spool, before nodes are granted job lease d,
// the longest lease a node may hold: d, the one granted until now, or a
// longer one granted before while it may still be held (until
// leaseFloor). Synced: a controller that starts after a crash waits for it.
func (c *Controller) keepLease(ctx context.Context, d time.Duration) error {
	want := max(d, c.jobLease())
	if c.leaseKept > want && c.now().Before(c.leaseFloor) {
		want = c.leaseKept
	}
	if want == c.leaseKept {
		return nil
	}
	b, err := json.Marshal(leaseRecord{Lease: want})
	if err != nil {
		return err
	}
	if err := c.sp.SetState(ctx, leaseKey, b); err != nil {
		return fmt.Errorf("spool state %s: %w", leaseKey, err)
	}
	c.leaseKept = want
	return nil
}

// jobLease is the lease granted to nodes now.
func (c *Controller) jobLease() time.Duration { return time.Duration(c.jobLeaseNs.Load()) }

// leaseMargin is what the controller waits beyond a lease's end: a
// heartbeat interval and a second, for the node's SIGKILL to take effect
// and for clocks that run at slightly different rates.
func (c *Controller) leaseMargin() time.Duration { return c.heartbeat() + time.Second }

// requeueTime is when the jobs of a node last heard from at from are
// requeued, unless it comes back: its lease has run out by then.
func (c *Controller) requeueTime(from time.Time) time.Time {
	end := from.Add(c.jobLease())
	if c.leaseFloor.After(end) {
		end = c.leaseFloor
	}
	return end.Add(c.leaseMargin())
}

// silence marks node n down without requeueing its jobs yet: nothing new
// is placed there, and its jobs go back to the queue at requeueTime(from)
// unless it says hello first. A node without running jobs is simply down.
func (c *Controller) silence(n *node, from, now time.Time) {
	n.disconnect()
	n.deadline = time.Time{}
	jobs := c.jobsOn(n.name)
	if len(jobs) == 0 {
		c.nodeDown(n)
		return
	}
	n.silent, n.requeueAt = true, c.requeueTime(from)
	if err := c.syncDrain(n); err != nil {
		c.coreRefused("node down", "node", n.name, "err", err)
	}
	for _, j := range jobs {
		j.Reason, j.RequeueAt = api.ReasonNodeUnreachable, n.requeueAt
		j.history(now, fmt.Sprintf("node %s unreachable: requeued at %s unless it comes back (its job lease runs out first)",
			n.name, n.requeueAt.UTC().Format(time.RFC3339)))
		c.markDirty(j.ID)
	}
	c.needPass = true
}

// unsilence: node n said hello; if it was silent, its jobs carry on. Its
// jobs lose the NodeUnreachable reason either way (a record written
// before a controller restart may carry it).
func (c *Controller) unsilence(n *node, now time.Time) {
	if n.silent {
		n.silent, n.requeueAt = false, time.Time{}
		if err := c.syncDrain(n); err != nil {
			c.coreRefused("node back", "node", n.name, "err", err)
		}
		c.log.Info("node back before its jobs were requeued", "node", n.name)
	}
	for _, j := range c.jobsOn(n.name) {
		if j.Reason == api.ReasonNodeUnreachable {
			j.Reason, j.RequeueAt = "", time.Time{}
			j.history(now, "node "+n.name+" is back")
			c.markDirty(j.ID)
		}
	}
}

// nodeDown marks n down in the core, which requeues its jobs.
func (c *Controller) nodeDown(n *node) {
	n.up, n.silent, n.deadline, n.requeueAt = false, false, time.Time{}, time.Time{}
	n.disconnect()
	if err := c.core.Apply(sched.NodeDown{Node: n.name}); err != nil {
		c.coreRefused("node down", "node", n.name, "err", err)
	}
	if err := c.syncDrain(n); err != nil {
		c.coreRefused("node down", "node", n.name, "err", err)
	}
	c.needPass = true
}

// jobsOn lists the running jobs with a part on node name that has not
// ended.
func (c *Controller) jobsOn(name string) []*job {
	var out []*job
	for _, j := range c.jobs {
		if p := j.parts[name]; j.running() && p != nil && !p.exited {
			out = append(out, j)
		}
	}
	return out
}
