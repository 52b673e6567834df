package sim

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
)

// Main is sharq-sim's command line: it replays a job trace through sharq's
// scheduling core on a virtual clock, for what-if analysis of quotas and
// strategies before they reach a live cluster.
//
//	sharq-sim --config cluster.toml --trace jobs.csv [--actions actions.csv] [--out events.jsonl] [--report] [--plot usage.svg] [--compare]
//	sharq-sim import-itp FILE [-o trace.csv.gz] [--checkpoint 30m] [--walltime-seed N | --no-walltime] [--config-out itp.toml --gpus 1280]
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := newApp(os.Stdout).RunContext(ctx, flagsFirst(args)); err != nil {
		fmt.Fprintln(os.Stderr, "sharq-sim:", err)
		return 1
	}
	return 0
}

// NewApp is sharq-sim's command line writing its reports to stdout (also
// the source of its man page: internal/tools/mangen).
func NewApp(stdout io.Writer) *cli.App { return newApp(stdout) }

// newApp is the command line writing its reports to stdout.
func newApp(stdout io.Writer) *cli.App {
	return &cli.App{
		Writer: stdout,
		Name:   "sharq-sim",
		Usage:  "replay a job trace through sharq's scheduler on a virtual clock",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "cluster configuration (TOML)"},
			&cli.StringFlag{Name: "trace", Aliases: []string{"t"}, Usage: "job trace: CSV with submit_s,job,share,priority,gpus,duration_s[,nodes,grace_s,checkpoint_s,walltime_s], gzipped or not"},
			&cli.StringFlag{Name: "actions", Aliases: []string{"a"}, Usage: "actions at given times: CSV with t_s,action,target[,value]; action is cancel, hold, release, prio (value: the priority), down, up, drain or resume"},
			&cli.StringFlag{Name: "out", Usage: "write every event as a JSON line to `FILE` (- for stdout)"},
			&cli.BoolFlag{Name: "report", Usage: "print per-share usage, waits, preemptions and lost work (the default)"},
			&cli.StringFlag{Name: "plot", Usage: "draw GPUs in use per share over time to `FILE` (.svg, .png, .pdf)"},
			&cli.BoolFlag{Name: "compare", Usage: "also run the configuration with backfill = false, with fair_share = false, with every share RESERVE, with every share LEND_AND_BORROW without limit and (with a topology) with the topology off, and compare them side by side"},
			&cli.StringFlag{Name: "group", Usage: "every multi-node job whose trace row names no group requires `LEVEL` of its partition's topology (qsub -l place=group=LEVEL); LEVEL@SECONDS requires it for at most that wait"},
			&cli.StringFlag{Name: "variants", Usage: "with --compare, run only the variants named in `LIST` (comma-separated, e.g. \"as configured,topology off\")"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile to `FILE` (go tool pprof)"},
		},
		Action: simulate,
		Commands: []*cli.Command{{
			Name:      "import-itp",
			Usage:     "convert the Microsoft ITP trace (cluster,job_id,submission_time,duration,num_gpu) into a sharq-sim trace",
			ArgsUsage: "FILE",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the trace to `FILE` (gzipped if it ends in .gz; default stdout)"},
				&cli.StringFlag{Name: "config-out", Usage: "also write a cluster configuration with quotas in proportion to demand to `FILE`"},
				&cli.IntFlag{Name: "gpus", Value: 1280, Usage: "GPUs of the generated configuration (whole nodes of 8)"},
				&cli.DurationFlag{Name: "checkpoint", Usage: "give every job this checkpoint_s (e.g. 30m); default: jobs save on SIGTERM"},
				&cli.Uint64Flag{Name: "walltime-seed", Value: DefaultWalltimeSeed, Usage: "seed of the walltime model's per-job headroom (walltime_s: run time x [1,2), rounded up to 1, 2, 4, 8, 24, 48 or 168 hours)"},
				&cli.BoolFlag{Name: "no-walltime", Usage: "leave walltime_s empty (the partition's default_walltime applies)"},
			},
			Action: importITP,
		}},
	}
}

// gcPercent is the simulator's GOGC unless the environment sets one.
const gcPercent = 200

func simulate(c *cli.Context) (err error) {
	if c.String("config") == "" || c.String("trace") == "" {
		return errors.New("--config and --trace are required (see --help)")
	}
	if c.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", c.Args().First())
	}
	if os.Getenv("GOGC") == "" {
		// A batch run: a larger heap for less collection (about 7% less
		// CPU on the ITP trace with --compare, 240 MB at most).
		debug.SetGCPercent(gcPercent)
	}
	cl, err := LoadCluster(c.String("config"))
	if err != nil {
		return err
	}
	jobs, err := LoadTrace(c.String("trace"))
	if err != nil {
		return err
	}
	if g := c.String("group"); g != "" {
		level, wait, err := parseGroup(g)
		if err != nil {
			return fmt.Errorf("--group: %w", err)
		}
		SetGroup(jobs, level, wait)
	}
	if err := ValidateTrace(&cl, jobs); err != nil {
		var te *TraceError
		if errors.As(err, &te) {
			te.File = c.String("trace")
		}
		return err
	}
	var acts []Action
	if path := c.String("actions"); path != "" {
		if acts, err = LoadActions(path); err != nil {
			return err
		}
		if err := ValidateActions(&cl, jobs, acts); err != nil {
			var te *TraceError
			if errors.As(err, &te) {
				te.File = path
			}
			return err
		}
	}
	if path := c.String("cpuprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	report := c.Bool("report") || (c.String("out") == "" && c.String("plot") == "" && !c.Bool("compare"))

	opt := Options{Usage: c.String("plot") != ""}
	if path := c.String("out"); path != "" {
		w, closeOut, err := create(path)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := closeOut(); err == nil {
				err = cerr
			}
		}()
		opt.Events = w
	}

	variants := []Variant{{Name: VariantConfigured, Cluster: cl}}
	if c.Bool("compare") {
		variants = Variants(cl)
		if list := c.String("variants"); list != "" {
			if variants, err = pickVariants(variants, list); err != nil {
				return err
			}
		}
	}
	opt.Actions = acts
	opts := make([]Options, len(variants))
	opts[0] = opt
	for i := 1; i < len(opts); i++ {
		opts[i].Actions = acts
	}
	var bar *Progress
	if f := os.Stderr; isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()) {
		bar = NewProgress(f, len(jobs), len(variants))
		for i := range opts {
			opts[i].Progress = bar.Func(i)
		}
	}
	results, err := Compare(c.Context, variants, jobs, opts)
	if bar != nil {
		bar.Done()
	}
	if err != nil {
		return err
	}
	stdout := c.App.Writer
	if report {
		if err := WriteReport(stdout, results[0]); err != nil {
			return err
		}
	}
	if c.Bool("compare") {
		if report {
			fmt.Fprintln(stdout)
		}
		if err := WriteCompare(stdout, results); err != nil {
			return err
		}
	}
	if path := c.String("plot"); path != "" {
		title := fmt.Sprintf("GPUs in use per share: %s on %s", c.String("trace"), c.String("config"))
		if err := SavePlot(path, results[0], title); err != nil {
			return err
		}
	}
	return nil
}

func importITP(c *cli.Context) (err error) {
	if c.NArg() != 1 {
		return errors.New("import-itp takes exactly one FILE")
	}
	var in io.Reader = os.Stdin
	if name := c.Args().First(); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	jobs, err := ReadITP(in)
	if err != nil {
		var te *TraceError
		if errors.As(err, &te) {
			te.File = c.Args().First()
		}
		return err
	}
	if !c.Bool("no-walltime") {
		AddWalltimes(jobs, c.Uint64("walltime-seed"))
	}
	if d := c.Duration("checkpoint"); d > 0 {
		for i := range jobs {
			jobs[i].Checkpoint = d
		}
	}
	path := c.String("output")
	if path == "" {
		path = "-"
	}
	w, closeOut, err := create(path)
	if err != nil {
		return err
	}
	if err := EncodeTrace(w, jobs); err != nil {
		closeOut()
		return err
	}
	if err := closeOut(); err != nil {
		return err
	}
	if cfg := c.String("config-out"); cfg != "" {
		f, err := os.Create(cfg)
		if err != nil {
			return err
		}
		if err := WriteITPConfig(f, Demand(jobs), c.Int("gpus")); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return nil
}

// create opens path for writing ("-" is stdout), gzipping when the name
// ends in .gz; the returned function flushes and closes it.
func create(path string) (io.Writer, func() error, error) {
	if path == "-" {
		return os.Stdout, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return f, f.Close, nil
	}
	zw := gzip.NewWriter(f)
	return zw, func() error {
		err := zw.Close()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// flagsFirst lets import-itp take its flags after FILE (as in
// "import-itp FILE -o out.csv.gz"): urfave/cli stops parsing flags at the
// first argument, so the arguments after the command are reordered, flags
// (with their values) first and the rest after "--".
func flagsFirst(args []string) []string {
	if len(args) < 2 || args[1] != "import-itp" {
		return args
	}
	valued := map[string]bool{"-o": true, "--o": true, "-output": true, "--output": true,
		"-config-out": true, "--config-out": true, "-gpus": true, "--gpus": true,
		"-checkpoint": true, "--checkpoint": true, "-walltime-seed": true, "--walltime-seed": true}
	var flags, rest []string
	tail := args[2:]
	for k := 0; k < len(tail); k++ {
		switch t := tail[k]; {
		case t == "--":
			rest = append(rest, tail[k+1:]...)
			k = len(tail)
		case strings.HasPrefix(t, "-") && t != "-":
			flags = append(flags, t)
			if valued[t] && k+1 < len(tail) {
				flags = append(flags, tail[k+1])
				k++
			}
		default:
			rest = append(rest, t)
		}
	}
	out := append(append([]string{}, args[:2]...), flags...)
	if len(rest) > 0 {
		out = append(append(out, "--"), rest...)
	}
	return out
}
