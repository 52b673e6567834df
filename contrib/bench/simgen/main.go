// Command simgen writes a synthetic sharq-sim trace and the cluster
// configuration it runs on (issue 30 item 9's scale): by default 2,000
// nodes of 8 GPUs (16,000 GPUs) and 200 shares holding 90% of them as quota
// (RESERVE, LEND, LEND_AND_BORROW with a 50% borrow limit and without a
// limit, in turn), fair share, fair preemption and backfill on, a 48-hour
// default_walltime. The same flags give the same files.
//
//	simgen -jobs 100000 -seed 1 -o trace.csv.gz -config-out scale.toml
//
// Jobs arrive as a Poisson process at the rate that keeps the cluster
// loaded at -load of its GPUs on average; a job's share is drawn by a
// weight log-uniform over [1/e, e] (some shares ask for more than their
// quota, others for less), its size is 1, 2, 4 or 8 GPUs on one node or 2 x 8 (one in
// 32), its run time log-uniform from 5 minutes to 3 days, its priority 0 to
// 3; three jobs in five give a walltime (run time x [1, 2), rounded up to
// whole hours), the others leave walltime_s empty and count the
// partition's default_walltime.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
)

// params is what the flags set.
type params struct {
	jobs, nodes, shares int
	gpusPerNode         int
	seed                uint64
	load                float64
}

func main() {
	var p params
	var out, cfgOut string
	flag.IntVar(&p.jobs, "jobs", 100000, "number of jobs")
	flag.IntVar(&p.nodes, "nodes", 2000, "nodes")
	flag.IntVar(&p.gpusPerNode, "gpus-per-node", 8, "GPUs per node")
	flag.IntVar(&p.shares, "shares", 200, "shares")
	flag.Uint64Var(&p.seed, "seed", 1, "random seed")
	flag.Float64Var(&p.load, "load", 0.9, "offered load: GPU-seconds asked per GPU-second of the cluster")
	flag.StringVar(&out, "o", "-", "trace `FILE` (gzipped if it ends in .gz; - for stdout)")
	flag.StringVar(&cfgOut, "config-out", "", "also write the cluster configuration (TOML) to `FILE`")
	flag.Parse()
	if err := run(p, out, cfgOut); err != nil {
		fmt.Fprintln(os.Stderr, "simgen:", err)
		os.Exit(1)
	}
}

func run(p params, out, cfgOut string) error {
	switch {
	case p.jobs < 1 || p.jobs > 100_000_000:
		return fmt.Errorf("-jobs %d: want 1..100000000", p.jobs)
	case p.nodes < 1 || p.nodes > 100_000:
		return fmt.Errorf("-nodes %d: want 1..100000", p.nodes)
	case p.gpusPerNode < 8 || p.gpusPerNode > 64:
		return fmt.Errorf("-gpus-per-node %d: want 8..64", p.gpusPerNode)
	case p.shares < 4 || p.shares > 10_000:
		return fmt.Errorf("-shares %d: want 4..10000", p.shares)
	case !(p.load > 0 && p.load <= 10):
		return fmt.Errorf("-load %v: want (0, 10]", p.load)
	}
	if cfgOut != "" {
		if err := writeFile(cfgOut, func(w io.Writer) error { return writeConfig(w, p) }); err != nil {
			return err
		}
	}
	return writeFile(out, func(w io.Writer) error { return writeTrace(w, p) })
}

// writeFile writes path ("-": stdout) with fill, gzipped when the name
// ends in .gz.
func writeFile(path string, fill func(io.Writer) error) (err error) {
	var f *os.File
	if path == "-" {
		f = os.Stdout
	} else {
		if f, err = os.Create(path); err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(bw)
		w = zw
	}
	if err := fill(w); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// quota is every share's quota: 90% of the GPUs, spread evenly (the
// first shares get the remainder).
func quota(p params, i int) int {
	total := p.nodes * p.gpusPerNode * 9 / 10
	q := total / p.shares
	if i < total%p.shares {
		q++
	}
	return q
}

func writeConfig(w io.Writer, p params) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Synthetic scale cluster (contrib/bench/simgen -nodes %d -gpus-per-node %d -shares %d):\n", p.nodes, p.gpusPerNode, p.shares)
	fmt.Fprintf(&b, "# %d GPUs, 90%% of them as quota; strategies RESERVE, LEND, LEND_AND_BORROW 50%%,\n", p.nodes*p.gpusPerNode)
	b.WriteString("# LEND_AND_BORROW without limit in turn. Fair share, fair preemption, backfill.\n")
	b.WriteString("[scheduler]\nfair_share = true\nfair_preemption = true\nbackfill = true\n\n")
	b.WriteString("[cluster]\nname = \"scale\"\n\n")
	fmt.Fprintf(&b, "[[partition]]\nname = \"gpu\"\nnodes = \"n[00001-%05d]\"\npreempt_grace = \"60s\"\npreemption_retries = 5\ndefault_walltime = \"48h\"\n\n", p.nodes)
	fmt.Fprintf(&b, "[[node]]\nnames = \"n[00001-%05d]\"\ngpus = %d\n", p.nodes, p.gpusPerNode)
	for i := 0; i < p.shares; i++ {
		fmt.Fprintf(&b, "\n[[share]]\nname = \"s%03d\"\ngpus = %d\n", i, quota(p, i))
		switch i % 4 {
		case 0:
			b.WriteString("strategy = \"RESERVE\"\n")
		case 1:
			b.WriteString("strategy = \"LEND\"\n")
		case 2:
			b.WriteString("strategy = \"LEND_AND_BORROW\"\nborrow_limit = 50\n")
		case 3:
			b.WriteString("strategy = \"LEND_AND_BORROW\"\nborrow_limit = -1\n")
		}
		b.WriteString("users = [\"*\"]\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Job shapes and run times.
const (
	minRun = 5 * 60.0       // seconds
	maxRun = 3 * 24 * 3600. // seconds
)

var sizes = []int{1, 1, 1, 2, 2, 4, 4, 8} // GPUs on one node; 2 x 8 one job in 32

func writeTrace(w io.Writer, p params) error {
	rng := rand.New(rand.NewPCG(p.seed, 0x5eed5ca1e))
	// Share weights: log-uniform over [1/e, e] times the quota (all equal),
	// so that some shares ask for more than their quota and borrow or
	// queue, and others lend.
	weights := make([]float64, p.shares)
	for i := range weights {
		weights[i] = math.Exp(2*rng.Float64() - 1)
	}
	cum := make([]float64, p.shares)
	sum := 0.0
	for i, x := range weights {
		sum += x
		cum[i] = sum
	}
	// Mean GPUs and run time of a job, for the arrival rate.
	meanGPUs := 0.0
	for _, g := range sizes {
		meanGPUs += float64(g)
	}
	meanGPUs = meanGPUs/float64(len(sizes))*31/32 + 16.0/32
	meanRun := (maxRun - minRun) / math.Log(maxRun/minRun)
	rate := p.load * float64(p.nodes*p.gpusPerNode) / (meanGPUs * meanRun) // jobs per second

	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString("submit_s,job,share,priority,gpus,duration_s,nodes,walltime_s\n"); err != nil {
		return err
	}
	t := 0.0
	for k := 0; k < p.jobs; k++ {
		t += rng.ExpFloat64() / rate
		u := rng.Float64() * sum
		sh := 0
		for lo, hi := 0, p.shares-1; lo <= hi; {
			m := (lo + hi) / 2
			if cum[m] >= u {
				sh, hi = m, m-1
			} else {
				lo = m + 1
			}
		}
		gpus, nodes := sizes[rng.IntN(len(sizes))], 1
		if rng.IntN(32) == 0 {
			gpus, nodes = 8, 2
		}
		run := math.Ceil(minRun * math.Exp(rng.Float64()*math.Log(maxRun/minRun)))
		wall := ""
		if rng.IntN(5) < 3 {
			h := math.Ceil(run * (1 + rng.Float64()) / 3600)
			wall = fmt.Sprint(int64(h * 3600))
		}
		if _, err := fmt.Fprintf(bw, "%d,j%d,s%03d,%d,%d,%d,%d,%s\n", int64(t), k+1, sh, rng.IntN(4), gpus, int64(run), nodes, wall); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("trace: %w", err)
	}
	return nil
}
