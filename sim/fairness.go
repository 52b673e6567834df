package sim

import (
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Jain is Jain's fairness index of xs, (Σx)² / (n·Σx²): 1 when all are
// equal, 1/n when one has everything. It is 1 for no values or all zeros
// (nobody is treated worse than anybody else); negative values are taken
// as zero.
func Jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		x = max(x, 0)
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// shareWeight is the weight fair share gives a share among borrowers: its
// fair_weight, by default its quota (at least 1), as the core counts it.
func shareWeight(s *sched.Share) float64 {
	if s.FairWeight > 0 {
		return float64(s.FairWeight)
	}
	return float64(max(s.GPUs, 1))
}

// Borrowers is the shares that borrowed: LEND_AND_BORROW shares with
// borrowed GPU-hours, in configuration order.
func (r *Result) Borrowers() []*ShareResult {
	var out []*ShareResult
	for i := range r.Shares {
		s := &r.Shares[i]
		if s.Strategy == sched.LendAndBorrow && s.BorrowedGPUHours > 0 {
			out = append(out, s)
		}
	}
	return out
}

// BorrowerJain is Jain's index over the borrowers' borrowed GPU-hours
// divided by their weight (Borrowers; a share of weight 0 counts with
// weight 1): 1 when each borrowed in proportion to its weight.
func (r *Result) BorrowerJain() float64 {
	bs := r.Borrowers()
	xs := make([]float64, len(bs))
	for i, s := range bs {
		xs[i] = s.BorrowedGPUHours / max(s.Weight, 1)
	}
	return Jain(xs)
}

// FairnessWindow is the length of the windows WindowJain is measured over.
const FairnessWindow = 24 * time.Hour

// fairWindows measures fairness among contending borrowers window by
// window. A LEND_AND_BORROW share wants to borrow while it has pending
// jobs, is at or over its quota (so that each start would borrow) and is
// below its borrow limit (so that the core could let it). The contenders
// of a window of FairnessWindow are the shares that wanted to borrow for
// at least half of it: a share whose jobs waited only moments, or that got
// all it asked for, is not one (it may have borrowed less than others and
// still been treated fairly), nor is a share held back by its own limit.
// The window's index is Jain's over the contenders' borrowed GPU-hours in
// the window divided by their weight; windows with fewer than two
// contenders, or where they borrowed nothing, say nothing and are skipped.
// The result is the mean of the windows' indices weighted by the
// contenders' borrowed GPU-hours.
//
// "Below its borrow limit" is borrowed < limit: a share whose every
// pending job would take it past its limit (5 of 11 GPUs borrowed, an
// 8-GPU job) still counts as wanting, though the core cannot let it
// borrow. Result.WindowJainFit is the same measure over the shares whose
// smallest pending job also fits under the limit (runner.wantFit).
//
// Over the whole run (BorrowerJain) the index mostly measures demand: a
// share that wanted little borrowed little, however fair the rules. Per
// window among contenders it measures how the rules divide what several
// shares wanted at once.
type fairWindows struct {
	width    time.Duration
	weight   []float64
	cur      time.Duration   // the current window's index
	borrowed []float64       // GPU-hours in the current window, per share
	wanted   []time.Duration // time each share wanted to borrow in it
	sum, w   float64
	windows  int
}

func newFairWindows(width time.Duration, shares []ShareResult) fairWindows {
	f := fairWindows{width: width, cur: -1, weight: make([]float64, len(shares)),
		borrowed: make([]float64, len(shares)), wanted: make([]time.Duration, len(shares))}
	for i := range shares {
		f.weight[i] = max(shares[i].Weight, 1)
	}
	return f
}

// add accounts the interval [from, to) in which share i borrowed borrow[i]
// GPUs and wanted to borrow when wanting[i].
func (f *fairWindows) add(from, to time.Duration, borrow []int, wanting []bool) {
	for from < to {
		k := from / f.width
		if k != f.cur {
			f.close()
			f.cur = k
		}
		end := min(to, (k+1)*f.width)
		dt := (end - from).Hours()
		for i, b := range borrow {
			f.borrowed[i] += float64(b) * dt
			if wanting[i] {
				f.wanted[i] += end - from
			}
		}
		from = end
	}
}

// close ends the current window.
func (f *fairWindows) close() {
	var xs []float64
	total := 0.0
	for i, want := range f.wanted {
		if want > 0 && 2*want >= f.width {
			xs = append(xs, f.borrowed[i]/f.weight[i])
			total += f.borrowed[i]
		}
		f.borrowed[i], f.wanted[i] = 0, 0
	}
	if len(xs) < 2 || total <= 0 {
		return
	}
	f.sum += Jain(xs) * total
	f.w += total
	f.windows++
}

// finish closes the last window and returns the weighted mean index (1
// with no window counted) and how many windows counted.
func (f *fairWindows) finish() (float64, int) {
	f.close()
	if f.w == 0 {
		return 1, 0
	}
	return f.sum / f.w, f.windows
}
