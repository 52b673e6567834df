package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWorkConservingBound(t *testing.T) {
	const hdr = "submit_s,job,share,priority,gpus,duration_s,nodes\n"
	tests := []struct {
		name  string
		trace string
		end   time.Duration
		util  float64
	}{
		// 4 GPUs in two nodes of 2 (boundCluster).
		{"one small job", hdr + "0,j1,a,1,1,100,1\n", 100 * time.Second, 0.25},
		{"fills the cluster", hdr + "0,j1,a,1,2,100,2\n", 100 * time.Second, 1},
		{"backlog drains at capacity", hdr + "0,j1,a,1,2,100,2\n0,j2,a,1,2,100,2\n0,j3,a,1,1,100,1\n", 225 * time.Second, 1},
		{"idle gap: the backlog is gone before the next", hdr + "0,j1,a,1,2,100,2\n1000,j2,a,1,2,100,2\n",
			1100 * time.Second, 800.0 / (4 * 1100)},
		{"a long job ends last", hdr + "0,j1,a,1,2,100,2\n50,j2,a,1,1,1000,1\n", 1050 * time.Second, 1400.0 / (4 * 1050)},
		{"first submission is the origin", hdr + "500,j1,a,1,2,100,2\n", 600 * time.Second, 1},
		{"a job that can never start is left out", hdr + "0,j1,a,1,2,100,2\n0,huge,a,1,2,100,3\n0,wide,a,1,3,10,1\n",
			100 * time.Second, 1},
	}
	cl, err := LoadCluster(filepath.Join("testdata", "bound", "cluster.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := DecodeTrace(strings.NewReader(tc.trace))
			if err != nil {
				t.Fatal(err)
			}
			b := WorkConservingBound(jobs, &cl)
			if b.End != tc.end || math.Abs(b.Utilization-tc.util) > 1e-12 {
				t.Errorf("end %v utilization %v, want %v %v", b.End, b.Utilization, tc.end, tc.util)
			}
			// No schedule beats the bound: the core's does not.
			res, err := Run(context.Background(), cl, jobs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.End < b.End || res.UsefulUtilization() > b.Utilization+1e-12 {
				t.Errorf("the core did better than the bound: end %v, useful utilization %v", res.End, res.UsefulUtilization())
			}
		})
	}
}

// TestBoundITP: on the head of the ITP trace, every configuration of
// Compare stays within the bound, and the bound is the same for all.
func TestBoundITP(t *testing.T) {
	cl, jobs := itpJobs(t, 3000)
	res, err := Compare(context.Background(), Variants(cl), jobs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Bound != res[0].Bound || r.Bound.Utilization <= 0 || r.Bound.Utilization > 1 {
			t.Errorf("%s: bound %+v", r.Name, r.Bound)
		}
		if f := r.OfBound(); f <= 0 || f > 1 {
			t.Errorf("%s: %v of the bound", r.Name, f)
		}
	}
}

// TestBoundProperty: on random traces (seeded) over testdata/compare's
// cluster, no configuration of Compare ends before the bound's end or
// keeps more useful work per GPU-hour than the bound allows.
func TestBoundProperty(t *testing.T) {
	cl, err := LoadCluster(filepath.Join("testdata", "compare", "cluster.toml"))
	if err != nil {
		t.Fatal(err)
	}
	shares := []string{"a", "b", "c", "d", "e"}
	rng := rand.New(rand.NewPCG(14, 5))
	checked := 0
	for trial := range 20 {
		var b strings.Builder
		b.WriteString("submit_s,job,share,priority,gpus,duration_s,nodes,walltime_s\n")
		n := 5 + rng.IntN(40)
		for i := range n {
			// At most 4 GPUs in all, every share's quota: each job can
			// start under every configuration.
			gpus, nodes := 1+rng.IntN(4), 1
			if rng.IntN(5) == 0 {
				gpus, nodes = 1+rng.IntN(2), 2
			}
			dur := 1 + rng.IntN(5000)
			fmt.Fprintf(&b, "%d,j%d,%s,%d,%d,%d,%d,%d\n", rng.IntN(3000), i, shares[rng.IntN(len(shares))],
				rng.IntN(3)*100, gpus, dur, nodes, dur+rng.IntN(5000))
		}
		jobs, err := DecodeTrace(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		bound := WorkConservingBound(jobs, &cl)
		res, err := Compare(context.Background(), Variants(cl), jobs, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Totals().NeverStarted > 0 {
				continue // the bound counts jobs that fit their partition; a share may still never reach them
			}
			checked++
			if r.End < bound.End || r.UsefulUtilization() > bound.Utilization+1e-9 {
				t.Errorf("trial %d, %s: end %v utilization %v beat the bound (end %v, %v):\n%s", trial, r.Name,
					r.End, r.UsefulUtilization(), bound.End, bound.Utilization, b.String())
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d of 100 runs had every job start: the test checks little", checked)
	}
}
