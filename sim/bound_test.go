package sim

import (
	"context"
	"math"
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
