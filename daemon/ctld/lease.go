package ctld

import (
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
	if n.conn != nil {
		n.conn.close()
		n.conn = nil
	}
	n.deadline = time.Time{}
	jobs := c.jobsOn(n.name)
	if len(jobs) == 0 {
		c.nodeDown(n)
		return
	}
	n.silent, n.requeueAt = true, c.requeueTime(from)
	if err := c.syncDrain(n); err != nil {
		c.log.Error("node down", "node", n.name, "err", err)
	}
	for _, j := range jobs {
		j.Reason, j.RequeueAt = api.ReasonNodeUnreachable, n.requeueAt
		j.history(now, fmt.Sprintf("node %s unreachable: requeued at %s unless it comes back (its job lease runs out first)",
			n.name, n.requeueAt.UTC().Format(time.RFC3339)))
		c.markDirty(j.ID)
	}
	c.needPass = true
}

// unsilence: node n said hello while silent; its jobs carry on.
func (c *Controller) unsilence(n *node, now time.Time) {
	if !n.silent {
		return
	}
	n.silent, n.requeueAt = false, time.Time{}
	if err := c.syncDrain(n); err != nil {
		c.log.Error("node back", "node", n.name, "err", err)
	}
	for _, j := range c.jobsOn(n.name) {
		if j.Reason == api.ReasonNodeUnreachable {
			j.Reason, j.RequeueAt = "", time.Time{}
			j.history(now, "node "+n.name+" is back")
			c.markDirty(j.ID)
		}
	}
	c.log.Info("node back before its jobs were requeued", "node", n.name)
}

// nodeDown marks n down in the core, which requeues its jobs.
func (c *Controller) nodeDown(n *node) {
	n.up, n.silent, n.deadline, n.requeueAt = false, false, time.Time{}, time.Time{}
	if n.conn != nil {
		n.conn.close()
		n.conn = nil
	}
	if err := c.core.Apply(sched.NodeDown{Node: n.name}); err != nil {
		c.log.Error("node down", "node", n.name, "err", err)
	}
	if err := c.syncDrain(n); err != nil {
		c.log.Error("node down", "node", n.name, "err", err)
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
