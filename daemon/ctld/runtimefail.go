package ctld

import (
	"fmt"
	"time"
)

// A node whose container runtime cannot start containers (runc fails for
// every job: no cgroup mount, a cgroup file missing) says so of each start
// it fails (api.JobStateMsg.NodeFault, runtime.ErrRuntime): the job goes
// back to the queue without a retry counted. After nodeFaultStarts such
// failures within nodeFaultWindow the controller drains the node, with a
// typed reason (RuntimeFailing) in `sharqctl show nodes` and the
// sharq_node_runtime_drains_total counter, so its jobs run elsewhere
// instead of bouncing off it. Every Limits.RuntimeRetry it resumes the
// node on trial (a circuit breaker's half-open state): the first start
// that runs clears the drain, the first that fails the node's way drains
// it again at once. Before that, the node daemon tests its runtime by
// itself (a tiny container: daemon/noded/selftest.go) and counts the
// self-tests it passed in its heartbeats: one more clears the drain
// (selfTested). An admin's `sharqctl node resume` clears it too.
const (
	nodeFaultStarts = 3
	nodeFaultWindow = 10 * time.Minute
	// reasonRuntimeFailing starts the reason of such a drain.
	reasonRuntimeFailing = "RuntimeFailing"
)

// nodeFaultStart counts a start that failed on n through the node's fault.
func (c *Controller) nodeFaultStart(n *node, why string, now time.Time) {
	if n.trial {
		// The trial start failed too: drained again at once.
		n.trial = false
		n.faults = nil
		for range nodeFaultStarts - 1 {
			n.faults = append(n.faults, now)
		}
	}
	kept := n.faults[:0]
	for _, t := range n.faults {
		if now.Sub(t) < nodeFaultWindow {
			kept = append(kept, t)
		}
	}
	n.faults = append(kept, now)
	if len(n.faults) < nodeFaultStarts || n.runtimeFail != "" {
		return
	}
	n.runtimeFail = fmt.Sprintf("%s: %d job starts failed here within %v through the node's container runtime (last: %s); drained until `sharqctl node resume %s`",
		reasonRuntimeFailing, len(n.faults), nodeFaultWindow, why, n.name)
	n.runtimeFailAt = now
	c.log.Error("node drained: its container runtime cannot start containers", "node", n.name, "starts", len(n.faults), "last", why)
	c.met.runtimeDrains.Inc()
	if err := c.syncDrain(n); err != nil {
		c.coreRefused("drain of a failing node", "node", n.name, "err", err)
	}
	c.needPass = true
}

// retryRuntime resumes n on trial once it has been drained for its
// runtime for Limits.RuntimeRetry (called on its heartbeats).
func (c *Controller) retryRuntime(n *node, now time.Time) {
	if n.runtimeFail == "" || now.Sub(n.runtimeFailAt) < c.limits.RuntimeRetry {
		return
	}
	c.log.Info("node drained for its runtime: resumed on trial", "node", n.name, "drained_for", now.Sub(n.runtimeFailAt).Round(time.Second))
	n.runtimeFail, n.trial = "", true
	if err := c.syncDrain(n); err != nil {
		c.coreRefused("resume of a failing node for a trial", "node", n.name, "err", err)
	}
	c.needPass = true
}

// selfTested notes the count of runtime self-tests n's daemon reports
// passed (hello, heartbeat): one more than before, while n is drained for
// its runtime, clears the drain. A restarted daemon counts from 0 again.
func (c *Controller) selfTested(n *node, passed uint64) {
	more := passed > n.selfTests
	n.selfTests = passed
	if !more || n.runtimeFail == "" {
		return
	}
	c.log.Info("node's container runtime passed its self-test: drain cleared", "node", n.name,
		"drained_for", c.now().Sub(n.runtimeFailAt).Round(time.Second))
	n.clearRuntimeFail()
	if err := c.syncDrain(n); err != nil {
		c.coreRefused("resume of a node whose runtime passed its self-test", "node", n.name, "err", err)
	}
	c.needPass = true
}

// runtimeWorks notes a container started on n: a trial start clears the
// node's failures.
func (c *Controller) runtimeWorks(n *node) {
	if n.trial || len(n.faults) > 0 {
		if n.trial {
			c.log.Info("node's container runtime works again", "node", n.name)
		}
		n.clearRuntimeFail()
	}
}

// clearRuntimeFail forgets n's start failures (an admin's resume, a start
// that ran).
func (n *node) clearRuntimeFail() {
	n.faults, n.runtimeFail, n.trial = nil, "", false
}
