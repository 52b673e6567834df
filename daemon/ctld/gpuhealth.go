package ctld

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Sick GPUs. A node daemon reports the faults it found on its GPUs in
// every hello and heartbeat (api.NodeMsg.GPUFaults, runtime/gpu/health.go),
// and sends a heartbeat at once when it finds one. The controller fences
// each GPU with a fault an admin has not cleared (sched.GPUsFenced): no
// new job gets it from the next pass on, while the node's healthy GPUs
// keep taking jobs. A new fault writes a history entry on the job running
// on the GPU; a fatal one (api.GPUFault.Fatal) also stops that job and
// puts it back in its queue as qrerun does, a failure of the node not
// counted against the job. `sharqctl show nodes` lists each fenced GPU
// with its reason and time, sharq_node_unhealthy_gpus counts them, and
// `sharqctl node resume NODE` clears them, after the GPU was reset: the
// faults the node reported until then are forgotten, a later one fences
// again. The clearing outlives a controller restart: the spool keeps the
// cleared faults (gpuclear.go).

// maxGPUFaults bounds the faults kept of one node: one per GPU and kind.
const maxGPUFaults = 4 * 256

// gpuFaultKey names one fault as its node reported it.
type gpuFaultKey struct {
	index int
	kind  api.GPUFaultKind
	at    int64 // the node's time of it, Unix nanoseconds
}

func keyOf(f api.GPUFault) gpuFaultKey { return gpuFaultKey{f.Index, f.Kind, f.Time.UnixNano()} }

// gpuHealth is the controller's view of a node's GPU faults.
type gpuHealth struct {
	faults  []api.GPUFault       // reported, checked, not cleared
	seen    map[gpuFaultKey]bool // reported on the present connection or before
	cleared map[gpuFaultKey]bool // cleared by an admin, while the node still reports them
	// use is the GPU use of the node's running jobs, by job id, as last
	// reported (gpuuse.go).
	use map[string]*nodeUse
}

// gpuFaultsReported takes the faults n's daemon reports (hello, heartbeat):
// it checks them, acts on the new ones and fences the GPUs.
func (c *Controller) gpuFaultsReported(n *node, reported []api.GPUFault, now time.Time) {
	g := &n.gpu
	gpus := 0
	if cn := c.cfg.Node(n.name); cn != nil {
		gpus = cn.GPUs
	}
	if inv := n.inventory; inv != nil && len(inv.GPUs) > gpus {
		gpus = len(inv.GPUs)
	}
	var kept []api.GPUFault
	reportedKeys := map[gpuFaultKey]bool{}
	for _, f := range reported {
		if len(kept) >= maxGPUFaults {
			break
		}
		if f.Index < 0 || f.Index >= gpus || f.Index >= 256 {
			c.limits.logs.Warn(c.log, "node reports a fault of a GPU it does not have: ignored", "node", n.name, "gpu", f.Index)
			continue
		}
		f.Reason = clip(f.Reason, api.MaxGPUFaultReason)
		f.UUID = clip(f.UUID, 96)
		if f.Reason == "" {
			f.Reason = string(f.Kind)
		}
		k := keyOf(f)
		if reportedKeys[k] {
			continue
		}
		reportedKeys[k] = true
		if g.cleared[k] {
			continue
		}
		kept = append(kept, f)
		if !g.seen[k] {
			c.newGPUFault(n, f, now)
		}
	}
	// Only what the node still reports is remembered.
	forgot := false
	for k := range g.cleared {
		if !reportedKeys[k] {
			delete(g.cleared, k)
			forgot = true
		}
	}
	if forgot {
		c.clearedFaultsForgotten(n) // gpuclear.go
	}
	g.seen = reportedKeys
	g.faults = kept
	c.fenceGPUs(n)
}

// clip cuts s to at most n bytes, on a rune boundary, without control
// characters.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xc0 != 0x80 }

// newGPUFault writes the fault on the job running on the GPU and, for a
// fatal one, stops that job to run it again elsewhere.
func (c *Controller) newGPUFault(n *node, f api.GPUFault, now time.Time) {
	c.log.Error("GPU unhealthy: fenced, no new job gets it", "node", n.name, "gpu", f.Index, "uuid", f.UUID,
		"why", f.Reason, "fatal", f.Fatal, "at", f.Time)
	for _, j := range c.jobsOn(n.name) {
		if !slices.ContainsFunc(j.Allocs, func(a api.Alloc) bool { return a.Node == n.name && slices.Contains(a.GPUs, f.Index) }) {
			continue
		}
		what := fmt.Sprintf("GPU %d of %s unhealthy: %s", f.Index, n.name, f.Reason)
		switch {
		case !f.Fatal:
			j.history(now, what+"; the job goes on")
		case j.Stopping != "" || j.State != api.StateRunning:
			j.history(now, what)
		case j.Interactive:
			j.history(now, what+"; an interactive job cannot be run again: it goes on as far as it can")
		default:
			grace := c.grace(j)
			j.Stopping, j.State, j.RerunWhy = string(api.StopRerun), api.StateExiting, what
			j.history(now, fmt.Sprintf("%s: stopping (SIGTERM, SIGKILL after %v), then back to the queue, not counted against the job", what, grace))
			c.stopJobWithin(j, api.StopRerun, grace)
		}
		c.markDirty(j.ID)
	}
}

// fenceGPUs tells the core which of n's GPUs are fenced, if that changed.
func (c *Controller) fenceGPUs(n *node) {
	var idx []int
	for _, f := range n.gpu.faults {
		if !slices.Contains(idx, f.Index) {
			idx = append(idx, f.Index)
		}
	}
	slices.Sort(idx)
	if c.cfg.Node(n.name) == nil || slices.Equal(idx, c.core.FencedGPUs(n.name)) {
		return
	}
	if err := c.core.Apply(sched.GPUsFenced{Node: n.name, GPUs: idx}); err != nil {
		c.log.Error("fence of unhealthy GPUs", "node", n.name, "gpus", idx, "err", err)
		return
	}
	if cn := c.cfg.Node(n.name); cn != nil {
		c.met.unhealthyGPUs.WithLabelValues(n.name, cn.Partition).Set(float64(len(idx)))
	}
	c.needPass = true
}

// clearGPUFaults is an admin's resume of n: the faults it reported so far
// are forgotten and its GPUs given out again.
func (c *Controller) clearGPUFaults(n *node) {
	if len(n.gpu.faults) == 0 {
		return
	}
	if n.gpu.cleared == nil {
		n.gpu.cleared = map[gpuFaultKey]bool{}
	}
	for _, f := range n.gpu.faults {
		n.gpu.cleared[keyOf(f)] = true
	}
	c.log.Info("unhealthy GPUs cleared by an admin", "node", n.name, "gpus", len(n.gpu.faults))
	n.gpu.faults = nil
	c.fenceGPUs(n)
	if err := c.saveClearedGPUFaults(); err != nil { // gpuclear.go
		c.log.Error("spool the cleared GPU faults: a controller restart fences them again", "node", n.name, "err", err)
	}
}

// gpuProblems are the lines sharqctl show nodes gives n's fenced GPUs.
func (n *node) gpuProblems() []string {
	var out []string
	for _, f := range n.gpu.faults {
		s := fmt.Sprintf("GPU %d unhealthy since %s: %s", f.Index, f.Time.UTC().Format(time.RFC3339), f.Reason)
		if f.UUID != "" {
			s += " (" + f.UUID + ")"
		}
		out = append(out, s+"; cleared by `sharqctl node resume "+n.name+"` after a reset")
	}
	return out
}
