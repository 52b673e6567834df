package sim

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

func TestJain(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"none", nil, 1},
		{"all zero", []float64{0, 0, 0}, 1},
		{"one", []float64{7}, 1},
		{"equal", []float64{3, 3, 3, 3}, 1},
		{"one of four has it all", []float64{0, 0, 5, 0}, 0.25},
		{"1 2 3", []float64{1, 2, 3}, 36.0 / 42},
		{"half and half", []float64{2, 2, 0, 0}, 0.5},
		{"scale-free", []float64{100, 200, 300}, 36.0 / 42},
		{"negative as zero", []float64{-4, 2}, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Jain(tc.xs); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Jain(%v) = %v, want %v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestBorrowerJain(t *testing.T) {
	res := &Result{Shares: []ShareResult{
		{Name: "a", Strategy: sched.LendAndBorrow, Weight: 10, BorrowedGPUHours: 100},
		{Name: "b", Strategy: sched.LendAndBorrow, Weight: 20, BorrowedGPUHours: 200},
		{Name: "c", Strategy: sched.LendAndBorrow, Weight: 30}, // borrowed nothing: not a borrower
		{Name: "d", Strategy: sched.Lend, Weight: 5},
		{Name: "e", Strategy: sched.LendAndBorrow, Weight: 0, BorrowedGPUHours: 10}, // weight 0 counts as 1
	}}
	if n := len(res.Borrowers()); n != 3 {
		t.Fatalf("%d borrowers", n)
	}
	// 10, 10, 10 per unit of weight.
	if got := res.BorrowerJain(); math.Abs(got-1) > 1e-12 {
		t.Errorf("BorrowerJain = %v, want 1", got)
	}
	res.Shares[0].BorrowedGPUHours = 400 // 40, 10, 10
	if got, want := res.BorrowerJain(), 60.0*60/(3*1800); math.Abs(got-want) > 1e-12 {
		t.Errorf("BorrowerJain = %v, want %v", got, want)
	}
}

// TestFairWindows feeds intervals by hand: the contenders of a day are
// the shares that wanted to borrow for half of it or more; days with
// fewer than two contenders or nothing borrowed are skipped; intervals
// that cross midnight are split.
func TestFairWindows(t *testing.T) {
	const day = 24 * time.Hour
	type span struct {
		from, to time.Duration
		borrow   []int
		wanting  []bool
	}
	tests := []struct {
		name    string
		weights []float64
		spans   []span
		want    float64
		windows int
	}{
		{"nothing", []float64{1, 1}, nil, 1, 0},
		{"one contender", []float64{1, 1}, []span{{0, day, []int{8, 0}, []bool{true, false}}}, 1, 0},
		{"equal per weight", []float64{1, 3}, []span{{0, day, []int{2, 6}, []bool{true, true}}}, 1, 1},
		{"one takes all", []float64{1, 1}, []span{{0, day, []int{8, 0}, []bool{true, true}}}, 0.5, 1},
		{"satisfied share is no contender", []float64{1, 1, 1},
			[]span{{0, day, []int{8, 1, 8}, []bool{true, false, true}}}, 1, 1},
		{"contenders for half the day each", []float64{1, 1},
			[]span{{0, day / 2, []int{4, 4}, []bool{true, false}}, {day / 2, day, []int{4, 4}, []bool{false, true}}}, 1, 1},
		{"wanting for moments is no contending", []float64{1, 1, 1},
			[]span{{0, day / 4, []int{8, 0, 8}, []bool{true, true, true}}, {day / 4, day, []int{8, 0, 8}, []bool{true, false, true}}}, 1, 1},
		{"borrowed nothing", []float64{1, 1}, []span{{0, day, []int{0, 0}, []bool{true, true}}}, 1, 0},
		// Day 0: both borrow 8 GPUs all day (index 1, 384 GPU-h); day 1: 8
		// each for half the day, then a 16 alone: a 288 GPU-h, b 96, index
		// 384² / (2 (288² + 96²)) = 0.8 over 384 GPU-h.
		{"split at midnight, weighted by GPU-hours", []float64{1, 1},
			[]span{{0, day / 2, []int{8, 8}, []bool{true, true}}, {day / 2, 3 * day / 2, []int{8, 8}, []bool{true, true}},
				{3 * day / 2, 2 * day, []int{16, 0}, []bool{true, true}}},
			(1*384 + 0.8*384) / 768, 2},
		{"idle days between", []float64{1, 1},
			[]span{{0, day, []int{1, 1}, []bool{true, true}}, {day, 10 * day, []int{0, 0}, []bool{false, false}},
				{10 * day, 11 * day, []int{1, 1}, []bool{true, true}}}, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shares := make([]ShareResult, len(tc.weights))
			for i, w := range tc.weights {
				shares[i].Weight = w
			}
			f := newFairWindows(day, shares)
			for _, s := range tc.spans {
				f.add(s.from, s.to, s.borrow, s.wanting)
			}
			got, n := f.finish()
			if math.Abs(got-tc.want) > 1e-9 || n != tc.windows {
				t.Errorf("got %v over %d windows, want %v over %d", got, n, tc.want, tc.windows)
			}
		})
	}
}

// TestWindowJainFit: a wants to borrow by the daily form (1 of its 2
// allowed GPUs borrowed, a job pending) but its pending job (2 GPUs) would
// take it past its borrow limit, so the core cannot let it; c borrows 1
// GPU with a 3-GPU job pending that does not fit the 2 idle GPUs. The
// daily form counts both: Jain over (24/1, 24/2) GPU-h per weight = 0.9.
// Counting only shares whose smallest pending job fits under their limit,
// c alone contends: no day counts.
func TestWindowJainFit(t *testing.T) {
	cl := Cluster{Sched: sched.Config{
		Partitions: []sched.Partition{{Name: "p", PreemptionRetries: sched.Unlimited}},
		Nodes:      []sched.Node{{Name: "n1", Partition: "p", GPUs: 8}},
		Shares: []sched.Share{
			{Name: "own", Partition: "p", GPUs: 4, Strategy: sched.Lend},
			{Name: "a", Partition: "p", GPUs: 2, Strategy: sched.LendAndBorrow, BorrowLimit: 100, FairWeight: 1},
			{Name: "c", Partition: "p", GPUs: 2, Strategy: sched.LendAndBorrow, BorrowLimit: sched.Unlimited},
		},
	}}
	jobs, err := DecodeTrace(strings.NewReader("submit_s,job,share,priority,gpus,duration_s\n" +
		"0,a1,a,1,3,86400\n0,c1,c,1,3,86400\n1,a2,a,1,2,60\n1,c2,c,1,3,60\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), cl, jobs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.WindowJain-0.9) > 1e-3 || res.JainWindows != 1 {
		t.Errorf("daily Jain %v over %d days, want 0.9 over 1", res.WindowJain, res.JainWindows)
	}
	if res.WindowJainFit != 1 || res.JainWindowsFit != 0 {
		t.Errorf("job-fits-limit Jain %v over %d days, want 1 over 0", res.WindowJainFit, res.JainWindowsFit)
	}
}
