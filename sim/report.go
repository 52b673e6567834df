package sim

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// WriteReport writes a human-readable report of one result: the cluster's
// figures, then one row per share.
func WriteReport(w io.Writer, r *Result) error {
	t := r.Totals()
	fmt.Fprintf(w, "jobs %d on %d GPUs; makespan %s (first submit at %ss, last exit at %ss); %d scheduling passes\n",
		r.Jobs, r.TotalGPUs, FormatDuration(r.Makespan()), FormatSeconds(r.Start), FormatSeconds(r.End), r.Passes)
	fmt.Fprintf(w, "utilization %.1f%% (busy %s GPU-h / (%d GPUs x makespan)); preemptions %d; lost %s GPU-h of work, %s GPU-h of grace\n",
		100*r.Utilization(), gpuHours(r.BusyGPUHours), r.TotalGPUs, t.Preemptions, gpuHours(t.LostGPUHours), gpuHours(t.GraceGPUHours))
	fmt.Fprintf(w, "jobs finished %d, failed %d, never started %d, requeued and unfinished %d",
		t.Finished, t.Failed, t.NeverStarted, t.Unfinished)
	if t.Cancelled > 0 || t.NodeFailures > 0 {
		// Only with an actions file.
		fmt.Fprintf(w, "; cancelled %d; runs lost with their node %d", t.Cancelled, t.NodeFailures)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "wait = first submit to first start (nearest-rank percentiles of started jobs); queued = mean pending time per job, requeues included")
	fmt.Fprintln(w, "lost = GPU-hours of work thrown away (since the last checkpoint); grace = GPU-hours preempted jobs held while exiting")
	fmt.Fprintln(w, "slowdown = (wait + run) / run of finished jobs: submit to end over the run time, requeues included")
	fmt.Fprintf(w, "useful utilization %.1f%% = %.1f%% of the work-conserving bound within the share caps, %.1f%% of the one on the GPUs alone\n",
		100*r.UsefulUtilization(), 100*r.OfBound(), 100*r.OfGPUBound())
	fmt.Fprintf(w, "work-conserving bound within the share caps %.1f%% (%s GPU-h of work ending at %ss at the earliest%s); on the GPUs alone %.1f%% (%s GPU-h ending at %ss%s)\n",
		100*r.Bound.Utilization, gpuHours(r.Bound.WorkGPUHours), FormatSeconds(r.Bound.End.Truncate(time.Millisecond)), leftOut(r.Bound),
		100*r.GPUBound.Utilization, gpuHours(r.GPUBound.WorkGPUHours), FormatSeconds(r.GPUBound.End.Truncate(time.Millisecond)), leftOut(r.GPUBound))
	fmt.Fprintf(w, "wait p95 by job size:")
	for i, c := range SizeClasses {
		fmt.Fprintf(w, " %s %s (%d jobs);", c.Name, FormatDuration(Percentile(r.SizeWaits[i], 95)), len(r.SizeWaits[i]))
	}
	fmt.Fprintln(w)
	writeTopology(w, r)
	fmt.Fprintf(w, "Jain's index of borrowed GPU-h / weight over the %d borrowing shares: %.3f; per day over the shares that wanted to borrow for half of it: %.3f (%d days)\n",
		len(r.Borrowers()), r.BorrowerJain(), r.WindowJain, r.JainWindows)
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "share\tstrategy\tquota\tjobs\tdone\tfailed\tnever\town GPU-h\tborrowed GPU-h\tlent GPU-h\twait p50\tp95\tp99\tqueued\tslowdown p50\tp95\tpreempt\tlost GPU-h\tgrace GPU-h\t")
	row := func(s *ShareResult, strategy string) {
		queued := time.Duration(0)
		if s.Jobs > 0 {
			queued = time.Duration(math.Round(s.QueuedHours*3600/float64(s.Jobs))) * time.Second
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n",
			s.Name, strategy, s.Quota, s.Jobs, s.Finished, s.Failed, s.NeverStarted,
			gpuHours(s.OwnGPUHours), gpuHours(s.BorrowedGPUHours), gpuHours(s.LentGPUHours),
			FormatDuration(Percentile(s.Waits, 50)), FormatDuration(Percentile(s.Waits, 95)), FormatDuration(Percentile(s.Waits, 99)),
			FormatDuration(queued), slowdown(Percentile(s.Slowdowns, 50)), slowdown(Percentile(s.Slowdowns, 95)), s.Preemptions, gpuHours(s.LostGPUHours), gpuHours(s.GraceGPUHours))
	}
	for i := range r.Shares {
		s := &r.Shares[i]
		row(s, strategyLabel(s))
	}
	row(&t, "")
	return tw.Flush()
}

// leftOut says how many jobs a bound leaves out, if any.
func leftOut(b Bound) string {
	if b.LeftOut == 0 {
		return ""
	}
	if b.LeftOut == 1 {
		return ", 1 job that can never start left out"
	}
	return fmt.Sprintf(", %d jobs that can never start left out", b.LeftOut)
}

func strategyLabel(s *ShareResult) string {
	l := s.Strategy.String()
	if s.Strategy == sched.LendAndBorrow {
		if s.BorrowLimit < 0 {
			l += "(∞)"
		} else {
			l += "(" + strconv.Itoa(s.BorrowLimit) + "%)"
		}
	}
	return l
}

// slowdown writes a slowdown to about three significant digits; "-"
// when no job finished.
func slowdown(x float64) string {
	switch {
	case x == 0:
		return "-"
	case x < 10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case x < 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

func gpuHours(h float64) string {
	switch {
	case h == 0:
		return "0"
	case h < 10:
		return strconv.FormatFloat(h, 'f', 2, 64)
	case h < 1000:
		return strconv.FormatFloat(h, 'f', 1, 64)
	}
	return strconv.FormatFloat(h, 'f', 0, 64)
}

// FormatDuration writes d compactly: 42s, 12.5m, 3.2h, 4.1d.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	case d < time.Hour:
		return strconv.FormatFloat(d.Minutes(), 'f', 1, 64) + "m"
	case d < 48*time.Hour:
		return strconv.FormatFloat(d.Hours(), 'f', 1, 64) + "h"
	}
	return strconv.FormatFloat(d.Hours()/24, 'f', 1, 64) + "d"
}
