package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sharq-hpc/sharq/sim"
)

// Params describe a random trace and its cluster.
type Params struct {
	Seed            uint64
	Load            float64       // offered load: GPU-time submitted / (GPUs x Span)
	Nodes           int           // nodes of gpusPerNode GPUs
	Span            time.Duration // jobs are submitted over [0, Span)
	NoWalltime      float64       // fraction of jobs without a walltime
	DefaultWalltime time.Duration // the partition's default_walltime
}

const gpusPerNode = 8

// The shares: a and b borrow without a limit, c only lends. Demand is the
// fraction of the offered load each submits: b asks for more than its
// quota, a for less at loads under 1.1, c for less, so that c's idle quota
// is what the others borrow (and reclaim takes back).
var shares = []struct {
	name     string
	quota    float64 // fraction of the GPUs
	strategy string
	demand   float64
}{
	{"a", 0.5, "LEND_AND_BORROW", 0.45},
	{"b", 0.25, "LEND_AND_BORROW", 0.35},
	{"c", 0.25, "LEND", 0.20},
}

// Job sizes (GPUs) and their weights; above 8 GPUs whole nodes of 8.
var sizes = []struct {
	gpus   int
	weight float64
}{{1, 0.40}, {2, 0.10}, {4, 0.15}, {8, 0.15}, {16, 0.10}, {32, 0.10}}

// Run times are log-uniform in [minRun, maxRun]: no job runs past the
// default walltime, so one without a walltime is never cut short.
const minRun = 5 * time.Minute

func (p Params) check() error {
	switch {
	case p.Load <= 0 || p.Load > 100 || math.IsNaN(p.Load):
		return fmt.Errorf("load %v: want (0, 100]", p.Load)
	case p.Nodes < 4 || p.Nodes > 4096:
		return fmt.Errorf("nodes %d: want 4 to 4096 (the 32-GPU jobs must fit share c's quota)", p.Nodes)
	case p.Span < time.Hour || p.Span > 3650*24*time.Hour:
		return fmt.Errorf("span %v: want 1h to 10 years", p.Span)
	case p.NoWalltime < 0 || p.NoWalltime > 1 || math.IsNaN(p.NoWalltime):
		return fmt.Errorf("no-walltime %v: want [0, 1]", p.NoWalltime)
	case p.DefaultWalltime <= minRun || p.DefaultWalltime > 365*24*time.Hour:
		return fmt.Errorf("default walltime %v: want (%v, 1 year]", p.DefaultWalltime, minRun)
	}
	return nil
}

// maxJobs bounds a trace (a load of 100 on a large cluster for years is
// no benchmark anyone runs).
const maxJobs = 5_000_000

// Generate draws the trace: Poisson submissions over the span at the rate
// that gives the offered load, each job's share by demand, its size by
// weight, its run time log-uniform up to the default walltime, and with
// probability 1 - NoWalltime a walltime from import-itp's model of users'
// overestimates (sim.EstimateWalltime); the others name none and run on
// the default walltime.
func Generate(p Params) ([]sim.TraceJob, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed_7ace))
	maxRun := p.DefaultWalltime
	lo, hi := minRun.Seconds(), maxRun.Seconds()
	meanRun := (hi - lo) / math.Log(hi/lo) // of the log-uniform run time
	meanGPUs := 0.0
	for _, s := range sizes {
		meanGPUs += float64(s.gpus) * s.weight
	}
	gpus := float64(p.Nodes * gpusPerNode)
	rate := p.Load * gpus / (meanGPUs * meanRun) // jobs per second
	if rate*p.Span.Seconds() > maxJobs {
		return nil, errors.New("over 5,000,000 jobs: lower the load, span or nodes")
	}
	var jobs []sim.TraceJob
	for t := rng.ExpFloat64() / rate; t < p.Span.Seconds(); t += rng.ExpFloat64() / rate {
		j := sim.TraceJob{
			Submit: time.Duration(math.Round(t)) * time.Second,
			ID:     fmt.Sprintf("j%d", len(jobs)+1),
			Share:  pickShare(rng.Float64()),
			Nodes:  1,
			Grace:  -1,
		}
		if g := pickSize(rng.Float64()); g > gpusPerNode {
			j.GPUs, j.Nodes = gpusPerNode, g/gpusPerNode
		} else {
			j.GPUs = g
		}
		run := math.Exp(math.Log(lo) + rng.Float64()*math.Log(hi/lo))
		j.Duration = time.Duration(math.Round(run)) * time.Second
		if rng.Float64() >= p.NoWalltime {
			j.Walltime = sim.EstimateWalltime(j.ID, j.Duration, p.Seed)
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func pickShare(u float64) string {
	for _, s := range shares {
		if u < s.demand {
			return s.name
		}
		u -= s.demand
	}
	return shares[len(shares)-1].name
}

func pickSize(u float64) int {
	for _, s := range sizes {
		if u < s.weight {
			return s.gpus
		}
		u -= s.weight
	}
	return sizes[len(sizes)-1].gpus
}

func writeTrace(w io.Writer, jobs []sim.TraceJob) error { return sim.EncodeTrace(w, jobs) }

// WriteConfig writes the cluster: one partition of Nodes nodes of 8 GPUs
// with the default walltime, the three shares with quotas that sum to the
// GPUs, and the scheduler's defaults (backfill and fair share on).
func WriteConfig(w io.Writer, p Params) error {
	if err := p.check(); err != nil {
		return err
	}
	total := p.Nodes * gpusPerNode
	_, err := fmt.Fprintf(w, `# randtrace -seed %d -load %g -nodes %d -no-walltime %g -default-walltime %s (contrib/bench/randtrace)
[cluster]
name = "randtrace"

[[partition]]
name = "gpu"
nodes = "r[1-%d]"
preempt_grace = "60s"
default_walltime = "%s"

[[node]]
names = "r[1-%d]"
gpus = %d
`, p.Seed, p.Load, p.Nodes, p.NoWalltime, tomlDuration(p.DefaultWalltime), p.Nodes, tomlDuration(p.DefaultWalltime), p.Nodes, gpusPerNode)
	if err != nil {
		return err
	}
	left := total
	for i, s := range shares {
		q := int(math.Round(s.quota * float64(total)))
		if i == len(shares)-1 {
			q = left
		}
		left -= q
		borrow := ""
		if s.strategy == "LEND_AND_BORROW" {
			borrow = "borrow_limit = -1\n"
		}
		if _, err := fmt.Fprintf(w, "\n[[share]]\nname = %q\ngpus = %d\nstrategy = %q\n%susers = [\"*\"]\n",
			s.name, q, s.strategy, borrow); err != nil {
			return err
		}
	}
	return nil
}

// tomlDuration writes d in whole hours when it is some ("48h"), else as
// Go does.
func tomlDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}
