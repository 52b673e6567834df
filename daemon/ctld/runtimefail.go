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
// instead of bouncing off it; an admin's `sharqctl node resume` clears it
// once the runtime is repaired.
const (
	nodeFaultStarts = 3
	nodeFaultWindow = 10 * time.Minute
	// reasonRuntimeFailing starts the reason of such a drain.
	reasonRuntimeFailing = "RuntimeFailing"
)

// nodeFaultStart counts a start that failed on n through the node's fault.
func (c *Controller) nodeFaultStart(n *node, why string, now time.Time) {
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
	c.log.Error("node drained: its container runtime cannot start containers", "node", n.name, "starts", len(n.faults), "last", why)
	c.met.runtimeDrains.Inc()
	if err := c.syncDrain(n); err != nil {
		c.log.Error("drain of a failing node", "node", n.name, "err", err)
	}
	c.needPass = true
}

// clearRuntimeFail forgets n's start failures (an admin's resume).
func (n *node) clearRuntimeFail() {
	n.faults, n.runtimeFail = nil, ""
}
