// Command randtrace writes a seeded random trace and the cluster
// configuration it runs on, for sharq-sim: the random traces of issue 30
// item 5 (EASY backfill when part of the jobs name no walltime). The same
// flags give the same files, byte for byte.
//
//	randtrace -seed 3 -load 1.2 -trace t.csv -config c.toml
//	sharq-sim --config c.toml --trace t.csv --compare
//
// contrib/bench/backfill-random.sh runs seeds 1 to 7 at loads 0.8 to 1.6
// and prints utilization and p95 wait per job size, backfill on and off.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var p Params
	flag.Uint64Var(&p.Seed, "seed", 1, "random seed")
	flag.Float64Var(&p.Load, "load", 1, "offered load: submitted GPU-time / (GPUs x submission span)")
	flag.IntVar(&p.Nodes, "nodes", 16, "nodes of 8 GPUs")
	flag.DurationVar(&p.Span, "span", 30*24*time.Hour, "submission span")
	flag.Float64Var(&p.NoWalltime, "no-walltime", 0.4, "fraction of jobs with no walltime (they run on default_walltime)")
	flag.DurationVar(&p.DefaultWalltime, "default-walltime", 48*time.Hour, "the partition's default_walltime")
	tracePath := flag.String("trace", "", "write the trace (CSV) to `FILE`")
	configPath := flag.String("config", "", "write the cluster configuration (TOML) to `FILE`")
	flag.Parse()
	if *tracePath == "" || *configPath == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: randtrace [-seed N] [-load L] -trace FILE -config FILE")
		os.Exit(2)
	}
	if err := run(p, *tracePath, *configPath); err != nil {
		fmt.Fprintln(os.Stderr, "randtrace:", err)
		os.Exit(1)
	}
}

func run(p Params, tracePath, configPath string) error {
	jobs, err := Generate(p)
	if err != nil {
		return err
	}
	if err := writeFile(tracePath, func(f *os.File) error { return writeTrace(f, jobs) }); err != nil {
		return err
	}
	return writeFile(configPath, func(f *os.File) error { return WriteConfig(f, p) })
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
