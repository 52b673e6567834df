package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
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
			// One share whose cap is the whole cluster: the caps change nothing.
			if c := ShareCapBound(jobs, &cl); c.End != b.End || c.Utilization != b.Utilization || c.LeftOut != b.LeftOut {
				t.Errorf("within the share caps %+v, on the GPUs alone %+v", c, b)
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
		if r.GPUBound != res[0].GPUBound || r.GPUBound.Utilization <= 0 || r.GPUBound.Utilization > 1 {
			t.Errorf("%s: bound on the GPUs %+v", r.Name, r.GPUBound)
		}
		if r.Bound.Utilization <= 0 || r.Bound.Utilization > 1 || r.Bound.LeftOut == 0 && r.Bound.End < r.GPUBound.End {
			t.Errorf("%s: bound within the share caps %+v, on the GPUs %+v", r.Name, r.Bound, r.GPUBound)
		}
		if f, g := r.OfBound(), r.OfGPUBound(); f <= 0 || f > 1+1e-9 || g <= 0 || g > f {
			t.Errorf("%s: %v of the bound within the share caps, %v of the one on the GPUs", r.Name, f, g)
		}
	}
	// "all LEND_AND_BORROW, no limit" lifts every cap: there the two bounds
	// agree.
	for _, r := range res {
		if r.Name == VariantBorrow && r.Bound != r.GPUBound {
			t.Errorf("%s: bound within the share caps %+v, on the GPUs %+v", r.Name, r.Bound, r.GPUBound)
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
			if r.GPUBound != bound || r.End < r.Bound.End || r.Bound.End < bound.End {
				t.Errorf("trial %d, %s: end %v, bound within the share caps %+v, on the GPUs %+v:\n%s", trial, r.Name,
					r.End, r.Bound, bound, b.String())
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d of 100 runs had every job start: the test checks little", checked)
	}
}

// TestShareCapBound: ends computed by hand on testdata/bound/caps.toml (12
// GPUs: partition p 2 × 2, q 2 × 4; the caps are in the file's header), and
// the core's own run, which may not beat them and, where the job sizes
// allow, reaches them.
func TestShareCapBound(t *testing.T) {
	const hdr = "submit_s,job,share,priority,gpus,duration_s,nodes\n"
	rows := func(n int, f string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, f, i)
		}
		return b.String()
	}
	s := time.Second
	tests := []struct {
		name     string
		trace    string
		end      time.Duration // within the share caps
		gpuEnd   time.Duration // on the 12 GPUs alone
		work     float64       // GPU-s the caps' bound counts
		leftOut  int           // jobs it leaves out (WorkConservingBound: gpuLeft)
		gpuLeft  int
		reached  bool // the core's run ends at the bound
		runEnd   time.Duration
		startsAt time.Duration
	}{
		{name: "a share capped below its backlog", trace: "0,a1,a,1,2,100,1\n0,a2,a,1,2,100,1\n",
			// LEND a holds at most its quota 2: 400 GPU-s at 2.
			end: 200 * s, gpuEnd: 100 * s, work: 400, reached: true},
		{name: "two shares of a partition", trace: "0,a1,a,1,2,100,1\n0,a2,a,1,2,100,1\n0,b1,b,1,2,100,1\n",
			// p: 600 at 4 is 150, but a alone needs 200.
			end: 200 * s, gpuEnd: 100 * s, work: 600, reached: true},
		{name: "a cap and a later submission together", trace: "0,a1,a,1,2,200,1\n150,b1,b,1,2,100,2\n",
			// Every fluid end is 250 (p: 400 done by 100, then 400 at 4;
			// a: 400 at 2; b: 400 at 4 from 150), but from 150 to 200 a
			// needs its 2 GPUs, so b gets 2: 100 done, 300 left at 4.
			end: 275 * s, gpuEnd: 250 * s, work: 800, runEnd: 300 * s},
		{name: "a borrow limit rounds down", trace: rows(8, "0,d%d,d,1,1,100,1\n"),
			// d: quota 3 + 50% = 4.5, rounded down to 4: 800 at 4.
			end: 200 * s, gpuEnd: 100 * s, work: 800, reached: true},
		{name: "RESERVE idle quota is lent to nobody", trace: rows(12, "0,e%d,e,1,1,100,1\n"),
			// e borrows without a limit, but c's 2 idle GPUs are not lent:
			// 1,200 at 8 - 2 = 6.
			end: 200 * s, gpuEnd: 100 * s, work: 1200, reached: true},
		{name: "a RESERVE share holds its quota", trace: rows(4, "0,c%d,c,1,1,100,1\n"),
			end: 200 * s, gpuEnd: 100 * s, work: 400, reached: true},
		{name: "partitions do not share GPUs", trace: rows(4, "0,b%d,b,1,2,100,1\n"),
			// b may hold all of p's 4 GPUs, none of q's 8.
			end: 200 * s, gpuEnd: 100 * s, work: 800, reached: true},
		{name: "jobs that can never start are left out",
			trace: "0,a1,a,1,2,100,1\n" +
				"0,a4,a,1,2,100,2\n" + // 4 GPUs, over LEND a's quota 2
				"0,b3,b,1,2,100,3\n" + // 3 nodes, p has 2
				"0,c3,c,1,3,100,1\n" + // 3 GPUs, over RESERVE c's quota 2
				"0,e8,e,1,4,100,2\n", // 8 GPUs, over the pool's 6
			// On the GPUs alone only b3 is left out: a1, a4, c3 and e8 are
			// 1,700 GPU-s at 12: 141.67 s.
			end: 100 * s, gpuEnd: 141666666666, work: 200, leftOut: 4, gpuLeft: 1, reached: true},
	}
	cl, err := LoadCluster(filepath.Join("testdata", "bound", "caps.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := DecodeTrace(strings.NewReader(hdr + tc.trace))
			if err != nil {
				t.Fatal(err)
			}
			b, g := ShareCapBound(jobs, &cl), WorkConservingBound(jobs, &cl)
			if b.End != tc.end || b.LeftOut != tc.leftOut || math.Abs(b.WorkGPUHours*3600-tc.work) > 1e-9 {
				t.Errorf("within the share caps: end %v, %v GPU-s, %d left out; want %v, %v, %d",
					b.End, b.WorkGPUHours*3600, b.LeftOut, tc.end, tc.work, tc.leftOut)
			}
			if want := tc.work / (12 * tc.end.Seconds()); math.Abs(b.Utilization-want) > 1e-12 {
				t.Errorf("utilization %v, want %v", b.Utilization, want)
			}
			if g.End != tc.gpuEnd || g.LeftOut != tc.gpuLeft {
				t.Errorf("on the GPUs alone: end %v, %d left out; want %v, %d", g.End, g.LeftOut, tc.gpuEnd, tc.gpuLeft)
			}
			res, err := Run(context.Background(), cl, jobs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if n := res.Totals().NeverStarted; n != b.LeftOut {
				t.Errorf("%d jobs never started, the bound left out %d", n, b.LeftOut)
			}
			want := tc.runEnd
			if tc.reached {
				want = tc.end
			}
			if res.End != want || res.Bound != b || res.GPUBound != g {
				t.Errorf("the core's run ends at %v (want %v), bounds %+v %+v", res.End, want, res.Bound, res.GPUBound)
			}
		})
	}
}

// TestShareCapBoundProperty: random small configurations (one or two
// partitions, shares of every strategy, quotas that may oversubscribe,
// borrow limits -1, 0, 50, 100) and traces (seeded), each run through the
// core as configured and without backfill. A job the bound leaves out never
// starts; when every other job ran to its end, no run ends before the
// bound or keeps more useful work per GPU-hour; and the bound within the
// caps is never below the one on the GPUs alone over the same jobs.
func TestShareCapBoundProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 6))
	strategies := []sched.Strategy{sched.Reserve, sched.Lend, sched.LendAndBorrow, sched.LendAndBorrow}
	limits := []int{sched.Unlimited, 0, 50, 100}
	checked, tighter := 0, 0
	for trial := range 200 {
		var cl Cluster
		var shares []string
		for p := range 1 + rng.IntN(2) {
			pn := fmt.Sprintf("p%d", p)
			cl.Sched.Partitions = append(cl.Sched.Partitions, sched.Partition{Name: pn, PreemptionRetries: sched.Unlimited,
				PreemptGrace: time.Duration(rng.IntN(3)) * 10 * time.Second})
			gpus, n := 2+2*rng.IntN(2), 1+rng.IntN(3)
			for i := range n {
				cl.Sched.Nodes = append(cl.Sched.Nodes, sched.Node{Name: fmt.Sprintf("%s-n%d", pn, i), Partition: pn, GPUs: gpus})
			}
			for i := range 1 + rng.IntN(3) {
				sn := fmt.Sprintf("%s-s%d", pn, i)
				shares = append(shares, sn)
				cl.Sched.Shares = append(cl.Sched.Shares, sched.Share{Name: sn, Partition: pn, GPUs: rng.IntN(gpus*n + 1),
					Strategy: strategies[rng.IntN(len(strategies))], BorrowLimit: limits[rng.IntN(len(limits))]})
			}
		}
		var b strings.Builder
		b.WriteString("submit_s,job,share,priority,gpus,duration_s,nodes,walltime_s\n")
		for i := range 5 + rng.IntN(30) {
			gpus, nodes, dur := 1+rng.IntN(4), 1+rng.IntN(2), 1+rng.IntN(3000)
			fmt.Fprintf(&b, "%d,j%d,%s,%d,%d,%d,%d,%d\n", rng.IntN(3000), i, shares[rng.IntN(len(shares))],
				rng.IntN(3)*100, gpus, dur, nodes, dur+rng.IntN(3000))
		}
		jobs, err := DecodeTrace(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		bound, gpu := ShareCapBound(jobs, &cl), WorkConservingBound(jobs, &cl)
		if bound.LeftOut == gpu.LeftOut && bound.End < gpu.End {
			t.Errorf("trial %d: within the share caps %+v, below the one on the GPUs alone %+v", trial, bound, gpu)
		}
		if bound.End > gpu.End {
			tighter++
		}
		noBackfill := cl.clone()
		noBackfill.Sched.Backfill = false
		cl.Sched.Backfill = true
		res, err := Compare(context.Background(), []Variant{{Name: "backfill", Cluster: cl}, {Name: "no backfill", Cluster: noBackfill}}, jobs, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			tot := r.Totals()
			if tot.NeverStarted < bound.LeftOut {
				t.Errorf("trial %d, %s: %d jobs never started, but the bound left out %d as never able to:\n%s", trial, r.Name,
					tot.NeverStarted, bound.LeftOut, b.String())
			}
			if tot.NeverStarted != bound.LeftOut || tot.Failed > 0 || tot.Unfinished > 0 {
				continue // some counted job did not run: the run did less work
			}
			checked++
			if r.End < bound.End || r.UsefulUtilization() > bound.Utilization+1e-9 {
				t.Errorf("trial %d, %s: end %v utilization %v beat the bound within the share caps (end %v, %v):\n%s", trial, r.Name,
					r.End, r.UsefulUtilization(), bound.End, bound.Utilization, b.String())
			}
		}
	}
	if checked < 200 || tighter < 30 {
		t.Errorf("only %d of 400 runs had every counted job finish, %d of 200 bounds were tighter than on the GPUs: the test checks little", checked, tighter)
	}
}

// TestShareCapBoundExact checks the flow network against the min-cut form
// of the fluid relaxation, computed by brute force on tiny random
// instances (one partition of 4 nodes of 2 GPUs, two or three shares,
// integer times):
// the work can be done by T if and only if for every choice of a time t_s
// per share (or none), the work each share submits from its t_s on fits in
// what the caps let the shares whose t_s has passed run until T. The least
// such T (or the latest submission plus run time) must come out.
func TestShareCapBoundExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 7))
	strategies := []sched.Strategy{sched.Reserve, sched.Lend, sched.LendAndBorrow}
	limits := []int{sched.Unlimited, 0, 50, 100}
	const gpus = 8
	flowBeat := 0 // cases where only the flow network finds the end
	for trial := range 2000 {
		var cl Cluster
		cl.Sched.Partitions = []sched.Partition{{Name: "p", PreemptionRetries: sched.Unlimited}}
		for i := range 4 {
			cl.Sched.Nodes = append(cl.Sched.Nodes, sched.Node{Name: fmt.Sprintf("n%d", i), Partition: "p", GPUs: 2})
		}
		S := 2 + rng.IntN(2)
		caps, reserve := make([]float64, S), make([]bool, S)
		rq, nq := 0, 0
		for i := range S {
			sh := sched.Share{Name: fmt.Sprintf("s%d", i), Partition: "p", GPUs: rng.IntN(gpus + 1),
				Strategy: strategies[rng.IntN(len(strategies))], BorrowLimit: limits[rng.IntN(len(limits))]}
			cl.Sched.Shares = append(cl.Sched.Shares, sh)
			if sh.Strategy == sched.Reserve {
				rq += sh.GPUs
			} else {
				nq += sh.GPUs
			}
		}
		pool := min(gpus, max(gpus-rq, nq))
		for i, sh := range cl.Sched.Shares {
			c := sh.GPUs // RESERVE and LEND: the quota
			if sh.Strategy == sched.LendAndBorrow {
				c += sh.GPUs * sh.BorrowLimit / 100
				if sh.BorrowLimit < 0 {
					c = gpus
				}
			}
			if reserve[i] = sh.Strategy == sched.Reserve; !reserve[i] {
				c = min(c, pool)
			}
			caps[i] = float64(min(c, gpus))
		}
		// rate is what the shares in set may run at together.
		rate := func(set []bool) float64 {
			var r, n float64
			for i, in := range set {
				switch {
				case in && reserve[i]:
					r += caps[i]
				case in:
					n += caps[i]
				}
			}
			return min(gpus, min(float64(pool), n)+r)
		}
		type job struct {
			at, work float64
			share    int
		}
		var js []job
		var b strings.Builder
		b.WriteString("submit_s,job,share,priority,gpus,duration_s,nodes\n")
		latest := 0.0
		for i := range 2 + rng.IntN(9) {
			at, g, n, d, s := rng.IntN(300), 1+rng.IntN(2), 1+rng.IntN(4), 1+rng.IntN(100), rng.IntN(S)
			fmt.Fprintf(&b, "%d,j%d,s%d,1,%d,%d,%d\n", at, i, s, g, d, n)
			if float64(g*n) > caps[s] {
				continue // never starts
			}
			js = append(js, job{float64(at), float64(g * n * d), s})
			latest = max(latest, float64(at+d))
		}
		jobs, err := DecodeTrace(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		// Every t_s: one of s's submission times, or none (index len).
		var times [][]float64
		for s := range S {
			var ts []float64
			for _, j := range js {
				if j.share == s && !slices.Contains(ts, j.at) {
					ts = append(ts, j.at)
				}
			}
			times = append(times, ts)
		}
		want, simple := latest, latest // simple: every t_s the same, or none (the fluid ends)
		pick := make([]int, S)
		for {
			var lhs float64
			var marks []float64
			for s := range S {
				if pick[s] < len(times[s]) {
					ts := times[s][pick[s]]
					marks = append(marks, ts)
					for _, j := range js {
						if j.share == s && j.at >= ts {
							lhs += j.work
						}
					}
				}
			}
			if lhs > 0 {
				slices.Sort(marks)
				// What the caps let the started shares run from mark to mark.
				var room float64
				set := make([]bool, S)
				for m, u := range marks {
					for s := range S {
						set[s] = pick[s] < len(times[s]) && times[s][pick[s]] <= u
					}
					if m+1 < len(marks) {
						room += rate(set) * (marks[m+1] - u)
					} else if lhs > room {
						want = max(want, u+(lhs-room)/rate(set))
						if marks[0] == u {
							simple = max(simple, u+lhs/rate(set))
						}
					}
				}
			}
			s := 0
			for ; s < S; s++ {
				if pick[s]++; pick[s] <= len(times[s]) {
					break
				}
				pick[s] = 0
			}
			if s == S {
				break
			}
		}
		got := ShareCapBound(jobs, &cl).End.Seconds()
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("trial %d: end %vs, the min cut %vs:\n%s", trial, got, want, b.String())
		}
		if want > simple+1 {
			flowBeat++
		}
	}
	if flowBeat < 30 {
		t.Errorf("the end passed every fluid end in only %d of 2000 cases: the test checks little", flowBeat)
	}
}

// BenchmarkShareCapBound: the bound within the share caps of the first
// 10,000 ITP rows on contrib/examples/itp.toml (every Run computes it once).
func BenchmarkShareCapBound(b *testing.B) {
	cl, jobs := itpJobs(b, 10000)
	for b.Loop() {
		ShareCapBound(jobs, &cl)
	}
}
