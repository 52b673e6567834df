package sim

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Bound is a work-conserving bound of a trace on a cluster: the earliest
// time all of the trace's work can be done, and so the best utilization a
// schedule can reach, under a relaxation of the scheduler's rules. Two are
// computed (a Result holds both):
//
// WorkConservingBound keeps only two constraints: the cluster runs at most
// its GPUs' worth of work at a time, and no job ends before its submission
// plus its run time. Jobs are fluid (a job's GPU-seconds may run on any
// GPUs, in any pieces, at once), nothing is preempted, shares and
// partitions do not exist. The earliest end of all work is then the later of
//
//   - the fluid end: a single queue of GPU-seconds drained at the cluster's
//     GPUs per second from each submission on (the backlog after the last
//     one, divided by the GPUs, after the last submission), and
//   - the latest submission plus run time of any job.
//
// ShareCapBound adds what the configuration caps, so no schedule under it
// can do better either (see ShareCapBound).
//
// Utilization is the work over the cluster's GPUs × (End − Start). Jobs that
// can never start are left out (LeftOut counts them). No real schedule
// does better, so a Result's utilization of useful work is at most
// Utilization (UsefulUtilization / Utilization is how close it comes), as
// long as it ran every job the bound counts.
type Bound struct {
	Start, End   time.Duration // first submission, earliest possible end
	WorkGPUHours float64       // GPUs × run time, summed over the jobs counted
	Utilization  float64
	LeftOut      int // jobs that can never start, not counted
}

// WorkConservingBound computes the trace's Bound on the cluster's GPUs
// alone (every job's share must be in it, as ValidateTrace checks). Jobs
// that can never start for want of nodes (more nodes of their size than
// their share's partition has) are left out.
func WorkConservingBound(jobs []TraceJob, cl *Cluster) Bound {
	gpus := cl.TotalGPUs()
	order := make([]int, 0, len(jobs))
	fit := newNodeFit(cl)
	for i := range jobs {
		if fit.fits(&jobs[i]) {
			order = append(order, i)
		}
	}
	b, work := gpuBound(jobs, order, gpus, nil)
	b.finish(work, gpus)
	return b
}

// gpuBound is WorkConservingBound's part that ShareCapBound keeps too: it
// sorts order (the jobs counted) by submission and returns the Bound's
// Start and End on gpus GPUs alone (the later of the fluid end and every
// job's submission plus run time), LeftOut (the jobs not in order) and
// the work in GPU-seconds; visit, if not nil, sees each counted job and
// its work in submission order. The caller finishes the Bound.
func gpuBound(jobs []TraceJob, order []int, gpus int, visit func(j *TraceJob, w float64)) (Bound, float64) {
	b := Bound{LeftOut: len(jobs) - len(order)}
	if len(order) == 0 || gpus <= 0 {
		return b, 0
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(jobs[a].Submit, jobs[b].Submit) })
	b.Start = jobs[order[0]].Submit
	var fl fluid
	var latest time.Duration
	for _, i := range order {
		j := &jobs[i]
		w := float64(j.TotalGPUs()) * j.Duration.Seconds()
		fl.add(j.Submit, w, float64(gpus))
		latest = max(latest, j.Submit+j.Duration)
		if visit != nil {
			visit(j, w)
		}
	}
	b.End = max(fl.end(float64(gpus)), latest)
	return b, fl.work
}

// finish sets the work and the utilization from the work in GPU-seconds.
func (b *Bound) finish(work float64, gpus int) {
	b.WorkGPUHours = work / 3600
	if span := (b.End - b.Start).Seconds(); span > 0 && gpus > 0 {
		b.Utilization = work / (float64(gpus) * span)
	}
}

// fluid is a queue of GPU-seconds drained at a fixed rate from each
// submission on; add must be called in submission order.
type fluid struct {
	backlog, work float64 // GPU-seconds
	last          time.Duration
	any           bool
}

func (f *fluid) add(at time.Duration, w, rate float64) {
	if f.any {
		f.backlog = max(0, f.backlog-rate*(at-f.last).Seconds())
	}
	f.any, f.last = true, at
	f.backlog += w
	f.work += w
}

// end is when the queue is empty (its last submission when nothing came).
func (f *fluid) end(rate float64) time.Duration {
	if !f.any {
		return 0
	}
	if rate <= 0 {
		return math.MaxInt64
	}
	return f.last + time.Duration(f.backlog/rate*float64(time.Second))
}

// nodeFit says whether a job's partition has enough nodes of its size.
type nodeFit struct {
	cl    *Cluster
	sizes map[string][]int // each partition's node GPU counts, descending
}

func newNodeFit(cl *Cluster) nodeFit {
	f := nodeFit{cl: cl, sizes: map[string][]int{}}
	for _, nd := range cl.Sched.Nodes {
		f.sizes[nd.Partition] = append(f.sizes[nd.Partition], nd.GPUs)
	}
	for _, s := range f.sizes {
		slices.SortFunc(s, func(a, b int) int { return cmp.Compare(b, a) })
	}
	return f
}

// fits reports whether the cluster has j.Nodes nodes of at least j.GPUs
// GPUs in j's share's partition.
func (f nodeFit) fits(j *TraceJob) bool {
	s := f.cl.share(j.Share)
	if s == nil {
		return false
	}
	sizes := f.sizes[s.Partition]
	return j.Nodes <= len(sizes) && (j.Nodes <= 0 || sizes[j.Nodes-1] >= j.GPUs)
}

// shareCap is the most GPUs the configuration lets share s hold at once in
// a partition of gpus GPUs whose non-RESERVE shares may hold pool together
// (the caps the core enforces; daemon/sched's share.usage against quota
// and borrowCap, partition.poolCap): a RESERVE or LEND share its quota, a
// LEND_AND_BORROW share its quota plus borrow_limit percent of it
// (rounded down, as the core does; no limit: the partition), never more
// than the partition (nor, but for RESERVE shares, the pool).
func shareCap(s *sched.Share, gpus, pool int) int {
	c := int64(s.GPUs)
	if s.Strategy == sched.LendAndBorrow {
		if s.BorrowLimit < 0 {
			c = int64(gpus)
		} else {
			c += int64(s.GPUs) * int64(s.BorrowLimit) / 100
		}
	}
	if s.Strategy != sched.Reserve {
		c = min(c, int64(pool))
	}
	return int(min(c, int64(gpus)))
}
