package sim

import (
	"math"
	"slices"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Result is what one simulation measured. GPU-hours are GPUs held times
// hours held. Wait times run from a job's submission to its first start
// (requeued jobs' later waits are in Queued instead).
type Result struct {
	Name      string // the variant's name in Compare; "" for a plain run
	TotalGPUs int
	Jobs      int
	Passes    int           // scheduling passes (distinct event times)
	Start     time.Duration // first submission
	End       time.Duration // last job exit
	// BusyGPUHours is the GPU-hours held by jobs, grace time included.
	BusyGPUHours float64
	Shares       []ShareResult   // in configuration order
	Waits        []time.Duration // every started job's first wait, ascending
	// SizeWaits is the first waits of the started jobs of each of
	// SizeClasses (by total GPUs), ascending.
	SizeWaits [][]time.Duration
	// Bound is the trace's work-conserving bound on this cluster within
	// its configuration's share caps (ShareCapBound), GPUBound the one on
	// its GPUs alone (WorkConservingBound).
	Bound, GPUBound Bound
	// WindowJain is the fairness among the borrowers that contended for
	// idle GPUs, window by window (see fairWindows), over JainWindows
	// windows of FairnessWindow.
	WindowJain  float64
	JainWindows int
	// WindowJainFit is WindowJain counting a share as wanting to borrow
	// only while its smallest pending job would also start within its
	// borrow limit (a share held back by its own limit is not a
	// contender: fairWindows), over JainWindowsFit windows.
	WindowJainFit  float64
	JainWindowsFit int
	Usage          *Usage // with Options.Usage
	// Topology says whether the cluster has a topology; Topo is what was
	// measured of it (topology.go).
	Topology bool
	Topo     topoStats
}

// SizeClass is a range of job sizes in total GPUs, Min..Max.
type SizeClass struct {
	Name     string
	Min, Max int
}

// SizeClasses are the job sizes the report gives waits for.
var SizeClasses = []SizeClass{
	{"1 GPU", 1, 1},
	{"2-8 GPUs", 2, 8},
	{"9-32 GPUs", 9, 32},
	{">32 GPUs", 33, math.MaxInt},
}

// sizeClass is the index in SizeClasses of a job of gpus GPUs.
func sizeClass(gpus int) int {
	for i, c := range SizeClasses {
		if gpus >= c.Min && gpus <= c.Max {
			return i
		}
	}
	return 0
}

// ShareResult is one share's part of a Result.
type ShareResult struct {
	Name        string
	Partition   string
	Strategy    sched.Strategy
	Quota       int
	BorrowLimit int
	// Weight is the share's weight among borrowers (fair share's
	// fair_weight; its quota by default).
	Weight float64

	Jobs         int
	Finished     int
	Failed       int // failed by the core (e.g. preemption retries exhausted)
	NeverStarted int // still pending at the end, never started (e.g. too big)
	Unfinished   int // started, requeued and never restarted
	Cancelled    int // ended by a cancel action (counted apart from Finished)
	NodeFailures int // runs requeued because their node went down (a down action)

	// OwnGPUHours is the GPU-hours used on the share's own quota,
	// BorrowedGPUHours those used beyond it, LentGPUHours its idle quota
	// that other shares used (as the core reports Lent).
	OwnGPUHours      float64
	BorrowedGPUHours float64
	LentGPUHours     float64

	Waits []time.Duration // first waits of the jobs that started, ascending
	// Slowdowns is each finished job's (wait + run) / run: the time from
	// its submission to its end over its run time (so requeues and the
	// work lost to them count as waiting), ascending.
	Slowdowns []float64
	// QueuedHours is the total pending time of all its jobs, requeues
	// included (job-hours).
	QueuedHours float64

	Preemptions int // times its jobs were preempted
	// LostGPUHours is the work thrown away by preemptions: GPUs times the
	// run time since the job's last checkpoint (zero for jobs that save on
	// SIGTERM). GraceGPUHours is the GPUs times grace time that preempted
	// jobs held while exiting.
	LostGPUHours  float64
	GraceGPUHours float64
}

func newResult(cl *Cluster, jobs []TraceJob, usage bool) *Result {
	res := &Result{TotalGPUs: cl.TotalGPUs(), Jobs: len(jobs), Shares: make([]ShareResult, len(cl.Sched.Shares)),
		SizeWaits: make([][]time.Duration, len(SizeClasses)), Bound: ShareCapBound(jobs, cl), GPUBound: WorkConservingBound(jobs, cl),
		Topology: cl.hasTopology()}
	for i := range cl.Sched.Shares {
		s := &cl.Sched.Shares[i]
		res.Shares[i] = ShareResult{Name: s.Name, Partition: s.Partition, Strategy: s.Strategy, Quota: s.GPUs, BorrowLimit: s.BorrowLimit,
			Weight: shareWeight(s)}
	}
	if usage {
		res.Usage = &Usage{Shares: len(cl.Sched.Shares)}
	}
	return res
}

// Makespan is the time from the first submission to the last job exit.
func (r *Result) Makespan() time.Duration { return r.End - r.Start }

// Utilization is busy GPU-hours / (GPUs x makespan).
func (r *Result) Utilization() float64 {
	h := r.Makespan().Hours() * float64(r.TotalGPUs)
	if h <= 0 {
		return 0
	}
	return r.BusyGPUHours / h
}

// UsefulUtilization is the GPU-hours of work kept (busy, less the grace
// time of preempted jobs and the work they lost) / (GPUs x makespan): the
// utilization that Bound.Utilization bounds.
func (r *Result) UsefulUtilization() float64 {
	h := r.Makespan().Hours() * float64(r.TotalGPUs)
	if h <= 0 {
		return 0
	}
	t := r.Totals()
	return (r.BusyGPUHours - t.GraceGPUHours - t.LostGPUHours) / h
}

// OfBound is UsefulUtilization as a fraction of the work-conserving bound
// within the share caps (Bound).
func (r *Result) OfBound() float64 { return r.of(r.Bound) }

// OfGPUBound is UsefulUtilization as a fraction of the work-conserving
// bound on the GPUs alone (GPUBound).
func (r *Result) OfGPUBound() float64 { return r.of(r.GPUBound) }

func (r *Result) of(b Bound) float64 {
	if b.Utilization <= 0 {
		return 0
	}
	return r.UsefulUtilization() / b.Utilization
}

// Totals sums the per-share counters.
func (r *Result) Totals() ShareResult {
	var t ShareResult
	t.Name = "all"
	for _, s := range r.Shares {
		t.Quota += s.Quota
		t.Jobs += s.Jobs
		t.Finished += s.Finished
		t.Failed += s.Failed
		t.NeverStarted += s.NeverStarted
		t.Unfinished += s.Unfinished
		t.Cancelled += s.Cancelled
		t.NodeFailures += s.NodeFailures
		t.OwnGPUHours += s.OwnGPUHours
		t.BorrowedGPUHours += s.BorrowedGPUHours
		t.LentGPUHours += s.LentGPUHours
		t.QueuedHours += s.QueuedHours
		t.Preemptions += s.Preemptions
		t.LostGPUHours += s.LostGPUHours
		t.GraceGPUHours += s.GraceGPUHours
	}
	t.Waits = r.Waits
	for _, s := range r.Shares {
		t.Slowdowns = append(t.Slowdowns, s.Slowdowns...)
	}
	slices.Sort(t.Slowdowns)
	return t
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// values (durations, slowdowns); the zero value for none.
func Percentile[T any](sorted []T, p float64) T {
	n := len(sorted)
	if n == 0 {
		var zero T
		return zero
	}
	k := int(p/100*float64(n)+0.999999999) - 1
	k = max(0, min(n-1, k))
	return sorted[k]
}
