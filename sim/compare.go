package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Variant is a configuration Compare runs.
type Variant struct {
	Name    string
	Cluster Cluster
	// Cost is the variant's expected run time relative to the others'
	// (0: as 1). Compare starts the costliest first, so that the longest
	// run does not end alone on one core; results do not depend on it.
	Cost float64
}

// Variant names.
const (
	VariantConfigured = "as configured"
	VariantNoBackfill = "no backfill"
	VariantNoFair     = "no fair share"
	VariantReserve    = "all RESERVE"
	VariantBorrow     = "all LEND_AND_BORROW, no limit"
	VariantNoTopology = "topology off"
)

// Variants returns the configurations Compare runs, each the cluster as
// configured but for one change:
//
//   - as configured;
//   - no backfill: [scheduler] backfill = false, no reservations: a
//     share's first blocked job holds back every later one of its share,
//     and blocked borrowers claim lendable GPUs in order (strict order,
//     issue 13 rules 2 and 3);
//   - no fair share: [scheduler] fair_share = false, borrowers in
//     submission order (FIFO);
//   - all RESERVE: every share RESERVE (a static split: no lending, no
//     borrowing);
//   - all LEND_AND_BORROW, no limit: every share lends and borrows
//     without a borrow limit;
//   - topology off, when a partition has a topology: the core without
//     the topologies and the jobs without their groups (spans are still
//     measured with the topology: topology.go).
func Variants(cl Cluster) []Variant {
	noBackfill, noFair, reserve, borrow := cl.clone(), cl.clone(), cl.clone(), cl.clone()
	noBackfill.Sched.Backfill = false
	noFair.Sched.FairShare = false
	for i := range reserve.Sched.Shares {
		reserve.Sched.Shares[i].Strategy = sched.Reserve
		borrow.Sched.Shares[i].Strategy = sched.LendAndBorrow
		borrow.Sched.Shares[i].BorrowLimit = sched.Unlimited
	}
	// Costs as measured on the ITP trace (sim-itp.sh): borrowing without
	// limit preempts and reserves the most; without backfill a pass makes
	// no reservations.
	vs := []Variant{
		{Name: VariantConfigured, Cluster: cl.clone(), Cost: 1},
		{Name: VariantNoBackfill, Cluster: noBackfill, Cost: 0.5},
		{Name: VariantNoFair, Cluster: noFair, Cost: 0.8},
		{Name: VariantReserve, Cluster: reserve, Cost: 0.9},
		{Name: VariantBorrow, Cluster: borrow, Cost: 1.8},
	}
	if cl.hasTopology() {
		off := cl.clone()
		off.TopologyOff = true
		vs = append(vs, Variant{Name: VariantNoTopology, Cluster: off, Cost: 1})
	}
	return vs
}

// Compare runs the trace under each variant, as many at once as there
// are cores (GOMAXPROCS), the costliest first (Variant.Cost), and returns
// the results in variant order. opts[i], when given, are variant i's
// options (the jobs are shared and only read).
func Compare(ctx context.Context, variants []Variant, jobs []TraceJob, opts []Options) ([]*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]*Result, len(variants))
	errs := make([]error, len(variants))
	next := make(chan int, len(variants))
	for _, i := range startOrder(variants) {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(len(variants), runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				var opt Options
				if i < len(opts) {
					opt = opts[i]
				}
				res, err := Run(ctx, variants[i].Cluster, jobs, opt)
				if err != nil {
					errs[i] = fmt.Errorf("variant %q: %w", variants[i].Name, err)
					cancel()
					continue
				}
				res.Name = variants[i].Name
				results[i] = res
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return results, nil
}

// startOrder is the order Compare starts the variants in: costliest
// first, then in variant order (longest processing time first: with as
// many running at once as there are cores, the last to end is seldom
// the longest).
func startOrder(variants []Variant) []int {
	order := make([]int, len(variants))
	for i := range order {
		order[i] = i
	}
	cost := func(i int) float64 {
		if c := variants[i].Cost; c > 0 {
			return c
		}
		return 1
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost(b), cost(a)) })
	return order
}

// WriteCompare writes the results side by side: one column per variant.
func WriteCompare(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(label string, f func(r *Result) string) {
		cells := []string{label}
		for _, r := range results {
			cells = append(cells, f(r))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	line("", func(r *Result) string { return r.Name })
	line("utilization", func(r *Result) string { return fmt.Sprintf("%.1f%%", 100*r.Utilization()) })
	line("makespan", func(r *Result) string { return FormatDuration(r.Makespan()) })
	line("wait p50", func(r *Result) string { return FormatDuration(Percentile(r.Waits, 50)) })
	line("wait p95", func(r *Result) string { return FormatDuration(Percentile(r.Waits, 95)) })
	line("wait p99", func(r *Result) string { return FormatDuration(Percentile(r.Waits, 99)) })
	for i, c := range SizeClasses {
		line("p95 wait "+c.Name, func(r *Result) string { return FormatDuration(Percentile(r.SizeWaits[i], 95)) })
	}
	line("slowdown p50", func(r *Result) string { return slowdown(Percentile(r.Totals().Slowdowns, 50)) })
	line("slowdown p95", func(r *Result) string { return slowdown(Percentile(r.Totals().Slowdowns, 95)) })
	line("Jain borrowers", func(r *Result) string { return fmt.Sprintf("%.3f (%d)", r.BorrowerJain(), len(r.Borrowers())) })
	line("Jain contending, daily", func(r *Result) string { return fmt.Sprintf("%.3f (%d)", r.WindowJain, r.JainWindows) })
	line("Jain contending, job fits limit", func(r *Result) string { return fmt.Sprintf("%.3f (%d)", r.WindowJainFit, r.JainWindowsFit) })
	line("useful / bound in share caps", func(r *Result) string { return fmt.Sprintf("%.1f%%", 100*r.OfBound()) })
	line("useful / bound on GPUs alone", func(r *Result) string { return fmt.Sprintf("%.1f%%", 100*r.OfGPUBound()) })
	if len(results) > 0 && results[0].Topology {
		line("multi-node in one domain", func(r *Result) string {
			return fmt.Sprintf("%.1f%% (%d)", 100*r.Topo.OneDomainShare(), r.Topo.MultiNode)
		})
		line("domains/job p50/p95", func(r *Result) string {
			return fmt.Sprintf("%d/%d", Percentile(r.Topo.Spans, 50), Percentile(r.Topo.Spans, 95))
		})
		line("group jobs in one domain", func(r *Result) string {
			return fmt.Sprintf("%.1f%% (%d)", 100*r.Topo.GroupOneDomainShare(), r.Topo.GroupStarted)
		})
		line("p95 wait group jobs", func(r *Result) string { return FormatDuration(Percentile(r.Topo.GroupWaits, 95)) })
	}
	line("preemptions", func(r *Result) string { return fmt.Sprint(r.Totals().Preemptions) })
	line("lost GPU-h", func(r *Result) string { return gpuHours(r.Totals().LostGPUHours) })
	line("grace GPU-h", func(r *Result) string { return gpuHours(r.Totals().GraceGPUHours) })
	line("borrowed GPU-h", func(r *Result) string { return gpuHours(r.Totals().BorrowedGPUHours) })
	line("failed jobs", func(r *Result) string { return fmt.Sprint(r.Totals().Failed) })
	line("never started", func(r *Result) string { return fmt.Sprint(r.Totals().NeverStarted) })
	if len(results) > 0 {
		for i := range results[0].Shares {
			name := results[0].Shares[i].Name
			line("p95 wait "+name, func(r *Result) string {
				if i >= len(r.Shares) {
					return "-"
				}
				return FormatDuration(Percentile(r.Shares[i].Waits, 95))
			})
		}
		for i := range results[0].Shares {
			name := results[0].Shares[i].Name
			line("slowdown p50/p95 "+name, func(r *Result) string {
				if i >= len(r.Shares) {
					return "-"
				}
				s := r.Shares[i].Slowdowns
				return slowdown(Percentile(s, 50)) + "/" + slowdown(Percentile(s, 95))
			})
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "wait = first submit to first start; percentiles are nearest-rank over the jobs that started"); err != nil {
		return err
	}
	if len(results) > 0 {
		b := results[0].GPUBound
		if _, err := fmt.Fprintf(w, "useful = utilization less grace and lost work; bound on GPUs alone = the work-conserving bound of the trace on the %d GPUs, %.1f%%:\n"+
			"%s GPU-h of work ending at %ss at the earliest (the same for every column); bound in share caps = the same within each column's own share caps\n"+
			"(a share never holds more than its quota, or quota + borrow limit, on its partition's GPUs: sim.ShareCapBound), ends at:",
			results[0].TotalGPUs, 100*b.Utilization, gpuHours(b.WorkGPUHours), FormatSeconds(b.End)); err != nil {
			return err
		}
		sep := " "
		for i := 0; i < len(results); {
			// Columns with the same caps side by side share one entry.
			n := i + 1
			for n < len(results) && results[n].Bound == results[i].Bound {
				n++
			}
			var names []string
			for _, r := range results[i:n] {
				names = append(names, r.Name)
			}
			b := results[i].Bound
			if _, err := fmt.Fprintf(w, "%s%s %ss (%.1f%%%s)", sep, strings.Join(names, ", "), FormatSeconds(b.End.Truncate(time.Millisecond)),
				100*b.Utilization, leftOut(b)); err != nil {
				return err
			}
			sep, i = "; ", n
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "slowdown = (wait + run) / run of finished jobs; Jain borrowers = Jain's index of borrowed GPU-h / weight over the shares that borrowed (how many);\n"+
		"Jain contending = the same per day over the shares that wanted to borrow (pending at or over quota, under the borrow limit) for half of it,\n"+
		"mean weighted by GPU-h borrowed (days counted); job fits limit = the same, wanting only while the share's smallest pending job would also start within its borrow limit")
	return err
}

// pickVariants keeps the variants list names (comma-separated), in
// variant order; the first must be "as configured" (the report's).
func pickVariants(vs []Variant, list string) ([]Variant, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []Variant
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
		if want[v.Name] {
			out = append(out, v)
			delete(want, v.Name)
		}
	}
	if len(want) > 0 || len(out) == 0 || out[0].Name != VariantConfigured {
		return nil, fmt.Errorf("--variants %q: name %q first, then any of: %s", list, VariantConfigured, strings.Join(names[1:], ", "))
	}
	return out, nil
}
