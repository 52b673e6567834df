package ctld

import (
	"crypto/subtle"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// node is the controller's view of a node daemon.
type node struct {
	name      string
	conn      *nodeConn // nil while disconnected
	up        bool
	lastSeen  time.Time
	inventory *api.Inventory
	problems  []string
	// unhealthy is why the node says it cannot start jobs ("" = it can);
	// drained is an admin's drain. The core's drain is either (syncDrain).
	unhealthy string
	drained   bool
	// comment is an admin's note on the node (pbsnodes -C).
	comment string
	// deadline (after a restart): a node not heard from by then is silent.
	deadline time.Time
	// silent: marked down at node_timeout (drained in the core) while its
	// jobs run on until requeueAt, when its job lease has run out
	// (lease.go).
	silent    bool
	requeueAt time.Time
	// sessionAddr is where the node serves sessions ("" = it does not).
	sessionAddr string
	// faults are the recent starts that failed here through the node's
	// fault; runtimeFail the reason of the drain they caused, since
	// runtimeFailAt; trial: drained so, it is resumed to see whether a start runs
	// (runtimefail.go).
	faults        []time.Time
	runtimeFail   string
	runtimeFailAt time.Time
	trial         bool
	// selfTests is the count of runtime self-tests the node daemon last
	// reported passed (api.NodeMsg.SelfTests).
	selfTests uint64
	// gpu is what the node reported of its GPUs' health (gpuhealth.go).
	gpu gpuHealth
}

// disconnect closes n's connection, if it has one.
func (n *node) disconnect() {
	if n.conn != nil {
		n.conn.close()
		n.conn = nil
	}
}

// nodeHello authenticates a node and reconciles what it runs with what the
// controller believes: jobs it still runs for their current run are kept;
// any other container is stopped; jobs it should run but does not are
// requeued. Runs on the loop.
func (c *Controller) nodeHello(nc *nodeConn, h *api.NodeMsg) error {
	if h.V != api.NodeVersion {
		return &refusal{api.RefusedVersion, fmt.Sprintf("node protocol version %d, this controller speaks %d: run the same sharq release on the node and the controller",
			h.V, api.NodeVersion)}
	}
	if len(c.secret) > 0 && subtle.ConstantTimeCompare([]byte(h.Secret), c.secret) != 1 {
		return &refusal{api.RefusedSecret, "bad secret"}
	}
	cn := c.cfg.Node(h.Node)
	if cn == nil {
		return &refusal{api.RefusedNode, fmt.Sprintf("node %q is not in the configuration", h.Node)}
	}
	if err := checkNodeCert(nc.isTLS, nc.cert, h.Node); err != nil {
		return err
	}
	now := c.now()
	n := c.node(h.Node)
	if n.conn != nil && n.conn != nc {
		n.conn.close()
	}
	n.conn, n.lastSeen, n.inventory, n.deadline = nc, now, h.Inventory, time.Time{}
	c.unsilence(n, now)
	if h.Seq == 0 {
		c.log.Warn("node holds no job lease (its sharqd is older): cut off from the controller, it keeps its jobs running after they are requeued", "node", h.Node)
	}
	n.sessionAddr = sessionAddr(h.SessionAddr, nc.remoteIP())
	n.problems = nil
	gpus := cn.GPUs
	if h.Error != "" { // what the node itself found wrong (missing devices, fewer CPUs...)
		n.problems = strings.Split(h.Error, "; ")
	}
	// With NVML, the GPUs the node really has win over the declared count.
	if inv := h.Inventory; inv != nil && inv.Source == "nvml" {
		for _, p := range gpu.Compare(cn.GPUs, inv.GPUs) {
			if !slices.Contains(n.problems, p) {
				n.problems = append(n.problems, p)
			}
		}
		gpus = min(gpus, len(inv.GPUs))
	}
	var missing []string
	if inv := h.Inventory; inv != nil {
		missing = inv.Missing
		for _, m := range missing {
			if !slices.Contains(n.problems, m) {
				n.problems = append(n.problems, m)
			}
		}
	}
	if len(n.problems) > 0 {
		c.log.Warn("node disagrees with the configuration", "node", h.Node, "problems", n.problems)
	}
	// Up (or not) before the welcome, so that a node the core refuses
	// is told so and stays down.
	switch {
	case n.up:
	case len(missing) > 0:
		// Its jobs would run without /home or /scratch: it stays down
		// until it reconnects with everything there.
		c.log.Error("node stays down: it lacks configured mounts", "node", h.Node, "missing", missing)
	case gpus == 0 && cn.GPUs > 0:
		// NodeUp{GPUs: 0} would mean "as declared": a GPU node whose NVML
		// sees no GPU stays down instead.
		c.log.Error("node stays down: NVML found none of its GPUs", "node", h.Node, "declared", cn.GPUs)
	default:
		up := sched.NodeUp{Node: h.Node, GPUs: gpus}
		if inv := h.Inventory; inv != nil {
			// Accounted where the configuration declares none: every job
			// counts at least one CPU, so jobs without GPUs cannot pile up.
			up.CPUs, up.MemBytes = max(0, inv.CPUs), max(0, inv.MemBytes)
			up.GPUPeers = nvlinkPeers(inv, gpus)
		}
		if err := c.core.Apply(up); err != nil {
			// What it reports is out of range (a hostile or broken
			// node): it stays down, and is told why.
			p := "refused by the scheduler: " + err.Error()
			n.problems = append(n.problems, p)
			c.log.Error("node stays down: the scheduler refused it", "node", h.Node, "err", err)
			n.conn = nil
			return &refusal{api.RefusedOther, fmt.Sprintf("node %s: %s", h.Node, p)}
		}
		n.up = true
		c.log.Info("node up", "node", h.Node, "gpus", gpus)
	}
	nc.send(api.NodeMsg{V: api.NodeVersion, Type: api.MsgWelcome, Time: now, Ack: h.Seq, Lease: c.jobLease()})

	c.setHealth(n, h.Health)
	c.selfTested(n, h.SelfTests)
	c.gpuFaultsReported(n, h.GPUFaults, now)

	has := map[string]api.RunningJob{}
	for _, r := range h.Running {
		has[r.JobID] = r
		j := c.jobs[r.JobID]
		if j == nil || !j.running() || j.parts[h.Node] == nil || r.Run != j.Runs-1 {
			// Not a run we know of on this node: stop it; its exit is then
			// answered with a remove.
			if r.Exited && r.Stop == api.StopLease {
				c.log.Info("node stopped a run as its job lease ran out; the job was requeued meanwhile", "node", h.Node, "job", r.JobID, "run", r.Run)
			}
			if !r.Exited {
				c.sendNode(h.Node, api.NodeMsg{Type: api.MsgStop, Stop: &api.StopOrder{JobID: r.JobID, Reason: api.StopUnknown}})
			} else {
				c.sendNode(h.Node, api.NodeMsg{Type: api.MsgRemove, Stop: &api.StopOrder{JobID: r.JobID}})
			}
			continue
		}
		if r.Exited {
			if r.Stop == api.StopLease {
				j.parts[h.Node].leaseStop = true
			}
			c.partExited(j, h.Node, r.ExitStatus, r.Error, false, now)
		} else if j.Stopping != "" {
			c.stopJob(j, api.StopReason(j.Stopping)) // a stop may have been lost with the old connection
		}
	}
	for _, j := range c.jobs {
		if h.Unlisted {
			break // the node cannot say what it runs: it says hello again when it can
		}
		if !j.running() || j.parts[h.Node] == nil || j.parts[h.Node].exited {
			continue
		}
		if _, ok := has[j.ID]; !ok {
			c.log.Warn("node no longer runs a job it was given: requeued", "node", h.Node, "job", j.ID)
			c.lostJob(j, now, "lost by node "+h.Node, false)
		}
	}
	c.needPass = true
	return nil
}

func (c *Controller) node(name string) *node {
	n := c.nodes[name]
	if n == nil {
		n = &node{name: name}
		c.nodes[name] = n
	}
	return n
}

// nodeGone: the connection closed; the node stays up until its timeout.
func (c *Controller) nodeGone(nc *nodeConn) {
	if n := c.nodes[nc.name]; n != nil && n.conn == nc {
		n.conn = nil
	}
}

func (c *Controller) nodeMessage(nc *nodeConn, m *api.NodeMsg) {
	n := c.nodes[nc.name]
	if n == nil || n.conn != nc {
		return // superseded connection
	}
	now := c.now()
	n.lastSeen = now
	if m.Type == api.MsgHeartbeat {
		c.setHealth(n, m.Health)
		c.selfTested(n, m.SelfTests)
		c.gpuFaultsReported(n, m.GPUFaults, now)
		c.gpuUseReported(n, m.GPUUse, now)
		c.retryRuntime(n, now)
		if m.Seq > 0 {
			nc.acknowledge(m.Seq) // after lastSeen: the node's lease runs from before it
		}
	}
	if m.Type != api.MsgJobState || m.JobState == nil {
		return
	}
	s := m.JobState
	nc.answered(s.JobID, s.Run)
	j := c.jobs[s.JobID]
	if j == nil || !j.running() || j.parts[nc.name] == nil || s.Run != j.Runs-1 {
		if s.State != api.RunRunning {
			c.sendNode(nc.name, api.NodeMsg{Type: api.MsgRemove, Stop: &api.StopOrder{JobID: s.JobID}})
		}
		return
	}
	switch s.State {
	case api.RunRunning:
		j.history(s.Time, "container started on "+nc.name)
		c.markDirty(j.ID)
		c.runtimeWorks(n)
	case api.RunExited, api.RunFailed:
		j.parts[nc.name].nodeFault = s.State == api.RunFailed && s.NodeFault
		j.parts[nc.name].gpuFault = s.State == api.RunFailed && s.NodeFault && s.GPUFault
		j.parts[nc.name].refused = s.State == api.RunFailed && s.Refusal != api.StartMayRetry
		j.parts[nc.name].leaseStop = s.State == api.RunExited && s.Stop == api.StopLease
		c.partExited(j, nc.name, s.ExitStatus, s.Error, s.State == api.RunFailed, now)
	}
}

// partExited records that one node's part of j ended: it exited, or
// (startFailed) it could not be started. When all parts have ended the core
// learns of it; the node removes the container once the record is durable.
func (c *Controller) partExited(j *job, nodeName string, status int, errText string, startFailed bool, now time.Time) {
	p := j.parts[nodeName]
	if p == nil || p.exited {
		return
	}
	p.exited, p.status, p.err, p.startFailed = true, status, errText, startFailed
	what := fmt.Sprintf("exited on %s with status %d", nodeName, status)
	if startFailed {
		what = "could not start on " + nodeName
	}
	if errText != "" {
		what += " (" + errText + ")"
	}
	j.history(now, what)
	c.markDirty(j.ID)
	c.sendNode(nodeName, api.NodeMsg{Type: api.MsgRemove, Stop: &api.StopOrder{JobID: j.ID}})
	if (status != 0 || startFailed) && j.Stopping == "" {
		j.Stopping = string(api.StopFailed)
		c.stopJob(j, api.StopFailed)
	}
	failedStart, jobFault, refused, leaseStop := false, false, false, false
	for _, q := range j.parts {
		if !q.exited {
			return // the others are still stopping
		}
		failedStart = failedStart || q.startFailed
		jobFault = jobFault || (q.startFailed && !q.nodeFault)
		refused = refused || (q.startFailed && q.refused)
		leaseStop = leaseStop || q.leaseStop
	}
	c.needPass = true
	if leaseStop && (j.Stopping == "" || j.Stopping == string(api.StopFailed)) {
		// A node stopped its part as its job lease ran out: the job lost
		// that node (the other parts were stopped for it).
		c.lostJob(j, now, "its node stopped it: the job lease ran out", true)
		return
	}
	if failedStart && !jobFault {
		// Every failure was the node's (its runtime is down or cannot
		// start containers): not the job's fault, so it does not count;
		// the node's is counted (runtimefail.go).
		for name, q := range j.parts {
			if q.startFailed && q.nodeFault && !q.gpuFault { // a GPU's fault is fenced, not the runtime's
				c.nodeFaultStart(c.node(name), q.err, now)
			}
		}
		c.lostJob(j, now, "could not start on "+nodeName+": "+errText, false)
		return
	}
	if failedStart {
		j.startErr = ""
		for _, q := range j.parts {
			if q.startFailed && !q.nodeFault && q.err != "" && (j.startErr == "" || q.refused) {
				j.startErr = q.err
			}
		}
		c.startFailed(j, refused)
		return
	}
	if j.Stopping == string(api.StopRerun) {
		c.rerunExited(j, now)
		return
	}
	st := j.exitStatus()
	if j.Stopping != "preempted" {
		j.ExitStatus = &st
		if errText != "" {
			j.Reason = errText
		}
	}
	if err := c.core.Apply(sched.Exited{ID: sched.JobID(j.ID), ExitStatus: st}); err != nil {
		c.coreRefused("exit", "job", j.ID, "err", err)
	}
}

// startFailed: a node could not start j through the job's fault (bad
// image, missing directory...) and every part has ended. The core counts
// it and decides: the next plan requeues the job, or fails it past its
// partition's start_failure_retries, or at once when a node refused the
// job itself (refused: a path its user may not use).
func (c *Controller) startFailed(j *job, refused bool) {
	if err := c.core.Apply(sched.StartFailed{ID: sched.JobID(j.ID), Refused: refused}); err != nil {
		c.coreRefused("start failure", "job", j.ID, "err", err)
	}
	c.needPass = true
}

// lostJob puts a job whose run vanished back in the queue, without counting
// a preemption; nodeLost counts it as a node failure (a node stopped it,
// as sched.NodeDown counts its jobs).
func (c *Controller) lostJob(j *job, now time.Time, why string, nodeLost bool) {
	if err := c.core.Apply(sched.Requeued{ID: sched.JobID(j.ID), NodeLost: nodeLost}); err != nil {
		c.coreRefused("requeue", "job", j.ID, "err", err)
		return
	}
	prefer := j.CheckpointNode
	if info, ok := c.core.Job(sched.JobID(j.ID)); ok {
		prefer = info.Job.PreferNode
	}
	c.backToQueue(j, now, "requeued: "+why, prefer)
	c.needPass = true
}

// checkNodes marks nodes silent for node_timeout down (lease.go), and
// has the core requeue their jobs once their job lease has run out.
func (c *Controller) checkNodes(now time.Time) {
	timeout := c.nodeTimeout()
	for _, n := range c.checkedNodes() {
		switch {
		case n.silent && !now.Before(n.requeueAt):
			c.log.Warn("node still silent, its job lease has run out: its jobs requeued", "node", n.name, "silent", now.Sub(n.lastSeen).Round(time.Second))
			c.nodeDown(n)
		case n.silent:
		case n.up && now.Sub(n.lastSeen) > timeout:
			c.silence(n, n.lastSeen, now)
			c.log.Warn("node silent: marked down, its jobs wait for its job lease to run out", "node", n.name,
				"silent", now.Sub(n.lastSeen).Round(time.Second), "requeue_at", n.requeueAt)
		case !n.up && !n.deadline.IsZero() && now.After(n.deadline):
			// The controller before this one renewed its lease until
			// it stopped, before this one started.
			c.silence(n, c.startedAt, now)
			c.log.Warn("node did not come back after the controller restarted: its jobs wait for its job lease to run out", "node", n.name,
				"requeue_at", n.requeueAt)
		}
	}
}

// checkedNodes are the configured nodes, in configuration order, then
// the nodes the configuration no longer has that still wait for their
// jobs' lease to run out (removed by a reload, or while the controller
// was down), by name.
func (c *Controller) checkedNodes() []*node {
	out := make([]*node, 0, len(c.cfg.Nodes))
	for _, cn := range c.cfg.Nodes {
		out = append(out, c.node(cn.Name))
	}
	if len(c.nodes) == len(out) {
		return out // every node is configured (c.node made each one's entry)
	}
	var gone []*node
	for name, n := range c.nodes {
		if (n.silent || !n.deadline.IsZero()) && c.cfg.Node(name) == nil {
			gone = append(gone, n)
		}
	}
	slices.SortFunc(gone, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	return append(out, gone...)
}

// setHealth records what a node says of its health and keeps the core's
// drain in step: nothing is placed on an unhealthy node.
func (c *Controller) setHealth(n *node, why string) {
	if n.unhealthy == why {
		return
	}
	if why != "" {
		c.log.Error("node unhealthy: no new jobs there", "node", n.name, "why", why)
	} else {
		c.log.Info("node healthy again", "node", n.name, "was", n.unhealthy)
	}
	n.unhealthy = why
	if err := c.syncDrain(n); err != nil {
		c.coreRefused("node health", "node", n.name, "err", err)
	}
	c.needPass = true
}

// syncDrain drains the node in the core while an admin drained it or it is
// unhealthy, and resumes it otherwise.
func (c *Controller) syncDrain(n *node) error {
	if c.cfg.Node(n.name) == nil {
		return nil // a ghost in the core: nothing is placed there anyway
	}
	want := n.drained || n.unhealthy != "" || n.silent || n.runtimeFail != ""
	for _, ni := range c.core.Nodes() {
		if ni.Name == n.name && ni.Drained == want {
			return nil
		}
	}
	var ev sched.Event = sched.NodeResumed{Node: n.name}
	if want {
		ev = sched.NodeDrained{Node: n.name}
	}
	return c.core.Apply(ev)
}

// nodeStatus is sharqctl show nodes.
func (c *Controller) nodeStatus() []api.NodeStatus {
	var out []api.NodeStatus
	for _, ni := range c.core.Nodes() {
		st := api.NodeStatus{Name: ni.Name, Partition: ni.Partition, GPUs: ni.GPUs, UsedGPUs: ni.UsedGPUs, State: "down"}
		if ni.Up {
			st.State = "up"
		}
		if n := c.nodes[ni.Name]; n != nil {
			st.Inventory, st.Problems, st.LastSeen, st.Comment = n.inventory, n.problems, n.lastSeen, n.comment
			switch {
			case n.silent:
				st.State = "down"
				st.Problems = append(st.Problems, fmt.Sprintf("unreachable: its jobs are requeued at %s unless it comes back",
					n.requeueAt.UTC().Format(time.RFC3339)))
			case n.drained || n.runtimeFail != "":
				st.State = "drained"
			case n.unhealthy != "" && ni.Up:
				st.State = "unhealthy"
			}
			if n.unhealthy != "" {
				st.Problems = append([]string{n.unhealthy}, st.Problems...)
			}
			if n.runtimeFail != "" {
				st.Problems = append([]string{n.runtimeFail}, st.Problems...)
			}
			st.Problems = append(st.Problems, n.gpuProblems()...)
			st.UnhealthyGPUs = slices.Clone(n.gpu.faults)
		}
		out = append(out, st)
	}
	ck := checkpointProblems(c.cfg, out)
	for i := range out {
		if p, ok := ck[out[i].Name]; ok {
			out[i].Problems = append(slices.Clone(out[i].Problems), p)
		}
	}
	return out
}

// resyncNodes runs after a reload: a node the core no longer has up (the
// new configuration removed it, or removed and re-added it, which leaves it
// down in the core) is disconnected, so that its next hello is checked
// against the new configuration and brings it up again. Without this a
// re-added node stayed down forever while it heartbeated.
func (c *Controller) resyncNodes() {
	up := map[string]bool{}
	for _, ni := range c.core.Nodes() {
		if ni.Up {
			up[ni.Name] = true
		}
	}
	now := c.now()
	for _, n := range c.nodes {
		if !n.up || up[n.name] {
			continue
		}
		if c.cfg.Node(n.name) == nil && len(c.jobsOn(n.name)) > 0 {
			// Its hello is refused from now on: nothing renews its job
			// lease, and its jobs go back to the queue once that has run
			// out (as a silent node's do), not while they may still run.
			c.log.Warn("node removed by the reload while jobs run there: they are requeued once its job lease has run out", "node", n.name)
			c.silence(n, now, now)
			n.up = false
			continue
		}
		c.log.Info("node changed by the reload: asked to say hello again", "node", n.name)
		n.up = false
		n.disconnect()
	}
}
