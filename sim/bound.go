package sim

import (
	"cmp"
	"slices"
	"time"
)

// Bound is the work-conserving bound of a trace on a cluster: the best
// utilization any schedule can reach. It relaxes every constraint but two:
// the cluster runs at most GPUs GPU-seconds of work per second, and no job
// ends before its submission plus its run time. Jobs are fluid (a job's
// GPU-seconds may run on any GPUs, in any pieces, at once), nothing is
// preempted and nobody waits for a share. The earliest end of all work is
// then the later of
//
//   - the fluid end: a single queue of GPU-seconds drained at GPUs per
//     second from each submission on (the backlog after the last one,
//     divided by GPUs, after the last submission), and
//   - the latest submission plus run time of any job;
//
// and Utilization is the work over GPUs × (that end − the first
// submission). Jobs that can never start (more nodes of their size than
// their share's partition has) are left out. No real schedule does better, so a Result's utilization of
// useful work is at most Utilization (UsefulUtilization / Utilization is
// how close it comes).
type Bound struct {
	Start, End   time.Duration // first submission, earliest possible end
	WorkGPUHours float64       // GPUs × run time, summed over the jobs
	Utilization  float64
}

// WorkConservingBound computes the trace's Bound on the cluster (every
// job's share must be in it, as ValidateTrace checks).
func WorkConservingBound(jobs []TraceJob, cl *Cluster) Bound {
	gpus := cl.TotalGPUs()
	order := make([]int, 0, len(jobs))
	for i := range jobs {
		if cl.fits(&jobs[i]) {
			order = append(order, i)
		}
	}
	if len(order) == 0 || gpus <= 0 {
		return Bound{}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(jobs[a].Submit, jobs[b].Submit) })
	var b Bound
	b.Start = jobs[order[0]].Submit
	c := float64(gpus)
	backlog, last, work := 0.0, b.Start, 0.0 // GPU-seconds
	var latest time.Duration
	for _, i := range order {
		j := &jobs[i]
		backlog = max(0, backlog-c*(j.Submit-last).Seconds())
		last = j.Submit
		w := float64(j.TotalGPUs()) * j.Duration.Seconds()
		backlog += w
		work += w
		latest = max(latest, j.Submit+j.Duration)
	}
	fluid := last + time.Duration(backlog/c*float64(time.Second))
	b.End = max(fluid, latest)
	b.WorkGPUHours = work / 3600
	if span := (b.End - b.Start).Seconds(); span > 0 {
		b.Utilization = work / (c * span)
	}
	return b
}

// fits reports whether the cluster has j.Nodes nodes of at least j.GPUs
// GPUs in j's share's partition.
func (c *Cluster) fits(j *TraceJob) bool {
	s := c.share(j.Share)
	if s == nil {
		return false
	}
	n := 0
	for _, nd := range c.Sched.Nodes {
		if nd.Partition == s.Partition && nd.GPUs >= j.GPUs {
			n++
		}
	}
	return n >= j.Nodes
}
