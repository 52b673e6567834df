package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/sim"
)

func defaults(seed uint64, load float64) Params {
	return Params{Seed: seed, Load: load, Nodes: 16, Span: 30 * 24 * time.Hour, NoWalltime: 0.4, DefaultWalltime: 48 * time.Hour}
}

// TestGenerate: the same parameters give the same files; the trace reads
// back, keeps its promises (walltimes at least the run time, no run past
// the default walltime, sizes in whole nodes above 8 GPUs) and offers
// about the load asked for; the configuration loads as sharq-sim loads
// it, with the quotas summing to the GPUs.
func TestGenerate(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		load float64
	}{{1, 0.8}, {4, 1.2}, {7, 1.6}} {
		p := defaults(tc.seed, tc.load)
		dir := t.TempDir()
		tr, cf := filepath.Join(dir, "t.csv"), filepath.Join(dir, "c.toml")
		if err := run(p, tr, cf); err != nil {
			t.Fatal(err)
		}
		tr2, cf2 := filepath.Join(dir, "t2.csv"), filepath.Join(dir, "c2.toml")
		if err := run(p, tr2, cf2); err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]string{{tr, tr2}, {cf, cf2}} {
			a, _ := os.ReadFile(pair[0])
			b, _ := os.ReadFile(pair[1])
			if !bytes.Equal(a, b) || len(a) == 0 {
				t.Errorf("seed %d: %s and %s differ (or are empty)", tc.seed, pair[0], pair[1])
			}
		}
		jobs, err := sim.LoadTrace(tr)
		if err != nil {
			t.Fatal(err)
		}
		var work, noWall float64
		for _, j := range jobs {
			if j.Walltime == 0 {
				noWall++
			} else if j.Walltime < j.Duration {
				t.Errorf("seed %d: %s: walltime %v under its run time %v", tc.seed, j.ID, j.Walltime, j.Duration)
			}
			if j.Duration < minRun || j.Duration > p.DefaultWalltime {
				t.Errorf("seed %d: %s runs %v, outside [%v, %v]", tc.seed, j.ID, j.Duration, minRun, p.DefaultWalltime)
			}
			if j.Nodes > 1 && j.GPUs != gpusPerNode || j.Submit < 0 || j.Submit >= p.Span {
				t.Errorf("seed %d: %s: %d x %d GPUs submitted at %v", tc.seed, j.ID, j.Nodes, j.GPUs, j.Submit)
			}
			work += float64(j.TotalGPUs()) * j.Duration.Seconds()
		}
		load := work / (float64(p.Nodes*gpusPerNode) * p.Span.Seconds())
		if math.Abs(load-tc.load)/tc.load > 0.25 {
			t.Errorf("seed %d: offered load %.2f, asked for %.2f", tc.seed, load, tc.load)
		}
		if f := noWall / float64(len(jobs)); math.Abs(f-p.NoWalltime) > 0.06 {
			t.Errorf("seed %d: %.2f of the jobs without walltime, asked for %.2f", tc.seed, f, p.NoWalltime)
		}
		cl, err := sim.LoadCluster(cf)
		if err != nil {
			t.Fatal(err)
		}
		if cl.TotalGPUs() != p.Nodes*gpusPerNode {
			t.Errorf("seed %d: cluster of %d GPUs, want %d", tc.seed, cl.TotalGPUs(), p.Nodes*gpusPerNode)
		}
	}
	if a, _ := Generate(defaults(1, 1)); len(a) > 0 {
		b, _ := Generate(defaults(2, 1))
		if len(b) > 0 && a[0] == b[0] && a[len(a)/2] == b[len(a)/2] {
			t.Error("seeds 1 and 2 give the same trace")
		}
	}
}

// TestParamsRefused: out-of-range parameters are refused, not generated.
func TestParamsRefused(t *testing.T) {
	for name, edit := range map[string]func(*Params){
		"zero load":       func(p *Params) { p.Load = 0 },
		"NaN load":        func(p *Params) { p.Load = math.NaN() },
		"huge load":       func(p *Params) { p.Load = 1e9 },
		"few nodes":       func(p *Params) { p.Nodes = 3 },
		"short span":      func(p *Params) { p.Span = time.Minute },
		"no-walltime > 1": func(p *Params) { p.NoWalltime = 1.5 },
		"tiny default":    func(p *Params) { p.DefaultWalltime = time.Minute },
		"too many jobs":   func(p *Params) { p.Load, p.Nodes, p.Span = 100, 4096, 3650*24*time.Hour },
	} {
		p := defaults(1, 1)
		edit(&p)
		if _, err := Generate(p); err == nil {
			t.Errorf("%s: generated", name)
		}
		var sb strings.Builder
		if name != "too many jobs" {
			if err := WriteConfig(&sb, p); err == nil {
				t.Errorf("%s: configuration written", name)
			}
		}
	}
}
