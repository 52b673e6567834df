package ctld

import (
	"math"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// Per-job GPU use. Each node daemon sends, with every heartbeat, the GPU
// use of the runs it runs (api.NodeMsg.GPUUse, daemon/noded/gpuuse.go).
// The controller keeps the latest of each node of a running job and
// shows their combination as the job's (api.Job.GPUUse: qstat -f
// resources_used.gpu_util, gpu_util_recent and gpu_mem); it stays on the
// job once the run ends, and is written to the spool with the job's next
// change (its exit, at the latest). sharq_share_idle_gpus counts the GPUs
// held by running jobs whose last sample was below api.IdleUtil.
//
// A job on several nodes: its utilization is the mean of its nodes'
// (each node holds as many of its GPUs), its memory the sum of theirs,
// its peak memory the sum of their peaks (an upper bound: the nodes'
// peaks need not coincide).

// gpuUseReported takes the GPU use n's daemon reports: entries of runs
// that are not running on n are ignored, values out of range clamped.
func (c *Controller) gpuUseReported(n *node, reported []api.JobGPUUse, now time.Time) {
	seen := map[string]bool{}
	for _, r := range reported {
		j := c.jobs[r.JobID]
		if j == nil || seen[r.JobID] || !j.running() || r.Run != j.Runs-1 {
			continue
		}
		if p := j.parts[n.name]; p == nil || p.exited {
			continue
		}
		seen[r.JobID] = true
		if n.gpu.use == nil {
			n.gpu.use = map[string]*nodeUse{}
		}
		u := n.gpu.use[r.JobID]
		if u == nil {
			u = &nodeUse{}
			n.gpu.use[r.JobID] = u
		}
		u.use = sane(r.GPUUse)
		switch low := u.use.Samples > 0 && u.use.RecentMaxUtil < c.idleThreshold(j); {
		case !low:
			u.lowSince = time.Time{}
		case u.lowSince.IsZero():
			u.lowSince = now
		}
		c.combineGPUUse(j)
		c.checkIdle(j, now)
	}
	for id := range n.gpu.use {
		if !seen[id] {
			delete(n.gpu.use, id) // ended here, or not here any more
		}
	}
}

// nodeUse is one node's part of a running job's GPU use, as last
// reported, and since when its GPUs have all been below the idle
// threshold (zero: they are not).
type nodeUse struct {
	use      api.GPUUse
	lowSince time.Time
}

// sane clamps what a node says into range.
func sane(u api.GPUUse) api.GPUUse {
	pct := func(v float64) float64 {
		if math.IsNaN(v) {
			return 0
		}
		return min(max(v, 0), 100)
	}
	u.MeanUtil, u.RecentUtil, u.RecentMaxUtil = pct(u.MeanUtil), pct(u.RecentUtil), pct(u.RecentMaxUtil)
	u.RecentMaxUtil = max(u.RecentMaxUtil, u.RecentUtil)
	u.Samples = max(u.Samples, 0)
	u.IdleSamples = min(max(u.IdleSamples, 0), u.Samples)
	if math.IsNaN(u.PowerWatts) || u.PowerWatts < 0 || u.PowerWatts > 1e6 {
		u.PowerWatts = 0
	}
	u.PeakMemBytes = max(u.PeakMemBytes, u.MemBytes)
	return u
}

// combineGPUUse sets j.GPUUse from its nodes' latest reports.
func (c *Controller) combineGPUUse(j *job) {
	var sum api.GPUUse
	k := 0
	for _, a := range j.Allocs {
		n := c.nodes[a.Node]
		if n == nil {
			continue
		}
		nu, ok := n.gpu.use[j.ID]
		if !ok {
			continue
		}
		u := nu.use
		k++
		sum.Samples = max(sum.Samples, u.Samples)
		sum.IdleSamples = max(sum.IdleSamples, u.IdleSamples)
		sum.MeanUtil += u.MeanUtil
		sum.RecentUtil += u.RecentUtil
		sum.RecentMaxUtil = max(sum.RecentMaxUtil, u.RecentMaxUtil)
		sum.MemBytes += u.MemBytes
		sum.PeakMemBytes += u.PeakMemBytes
		sum.PowerWatts += u.PowerWatts
	}
	if k == 0 {
		return
	}
	sum.MeanUtil /= float64(k)
	sum.RecentUtil /= float64(k)
	j.GPUUse = &sum
}

// updateIdleMetrics sets sharq_share_idle_gpus: per share, the GPUs of
// running jobs whose last sample was below api.IdleUtil.
func (c *Controller) updateIdleMetrics() {
	idle := map[string]int{}
	for _, j := range c.jobs {
		if j.State != api.StateRunning || j.GPUUse == nil || j.GPUUse.Samples == 0 || j.GPUUse.RecentUtil >= api.IdleUtil {
			continue
		}
		idle[j.Share] += max(j.Resources.Nodes, 1) * j.Resources.GPUsPerNode
	}
	for _, u := range c.core.Shares() {
		c.met.idleGPUs.WithLabelValues(u.Share).Set(float64(idle[u.Share]))
	}
}
