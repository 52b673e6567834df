package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// qsubOpts is what one source (the command line, or all #PBS directives of
// a script) asked for; nil or empty fields were not given.
type qsubOpts struct {
	name, queue, out, errPath, join, image, prefix *string
	workDir                                        *string // Torque's -d
	shell                                          *string // -S
	prio                                           *int
	res                                            resSpec
	vars                                           []envVar
	allEnv, hold, quiet, interactive               bool
	grace                                          *time.Duration
	umask                                          *string
	block                                          *bool
	deps                                           *[]api.Dep
	array                                          *arraySpec
	notBefore                                      *time.Time
	ignored                                        []string
}

// overlay applies o (the command line) over q (the directives).
func (q *qsubOpts) overlay(o *qsubOpts) {
	for _, p := range []struct{ dst, src **string }{
		{&q.name, &o.name}, {&q.queue, &o.queue}, {&q.out, &o.out}, {&q.errPath, &o.errPath},
		{&q.join, &o.join}, {&q.image, &o.image}, {&q.prefix, &o.prefix}, {&q.workDir, &o.workDir}, {&q.shell, &o.shell},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	if o.prio != nil {
		q.prio = o.prio
	}
	q.res.overlay(o.res)
	q.vars = append(q.vars, o.vars...)
	q.allEnv = q.allEnv || o.allEnv
	q.hold = q.hold || o.hold
	q.quiet = q.quiet || o.quiet
	q.interactive = q.interactive || o.interactive
	if o.grace != nil {
		q.grace = o.grace
	}
	if o.umask != nil {
		q.umask = o.umask
	}
	if o.block != nil {
		q.block = o.block
	}
	if o.deps != nil {
		q.deps = o.deps
	}
	if o.array != nil {
		q.array = o.array
	}
	if o.notBefore != nil {
		q.notBefore = o.notBefore
	}
	q.ignored = append(q.ignored, o.ignored...)
}

// qsubIgnored are PBS options sharq accepts and ignores, with a warning,
// so that existing scripts still submit.
var qsubIgnored = map[string]string{
	"m": "mail events", "M": "mail users", "r": "rerunnable (sharq reruns preempted jobs anyway)",
	"A": "account", "P": "project",
	"c": "checkpoint interval (sharq asks for a checkpoint at preemption, in $SHARQ_CHECKPOINT_DIR)",
	"k": "keep output on the execution host (sharq writes it in place)",
}

// qsubRefused are PBS/Torque options that sharq cannot honour; a script
// that needs them is refused, with the reason.
var qsubRefused = map[string]string{
	"X": "X11 forwarding", "f": "foreground submission",
}

func strValue(dst **string, check func(string) error) funcValue {
	return func(s string) error {
		if check != nil {
			if err := check(s); err != nil {
				return err
			}
		}
		*dst = &s
		return nil
	}
}

// qsubFlags are qsub's options, parsing into o. The command line also has
// -C (the directive prefix), which a directive cannot set.
func qsubFlags(o *qsubOpts, sys *Sys, cmdline bool) []ucli.Flag {
	fl := []ucli.Flag{
		&ucli.GenericFlag{Name: "N", Usage: "job `NAME` (default: the script's file name, STDIN, or the command's name)",
			Value: strValue(&o.name, validJobName)},
		&ucli.GenericFlag{Name: "q", Usage: "`SHARE` (PBS queue) to submit to, or SHARE@SERVER where SERVER is this cluster (default: the partition's or cluster's default_share)",
			Value: strValue(&o.queue, func(s string) error {
				if s == "" || strings.ContainsAny(s, " \t\n/") || strings.Count(s, "@") > 1 {
					return fmt.Errorf("%q is not a share name", s)
				}
				return nil
			})},
		&ucli.GenericFlag{Name: "l", Usage: "`RESOURCES`, per node: ngpus=4,ncpus=16,mem=64gb,walltime=12:00:00; nodes: select=2:ngpus=8 or nodes=2:gpus=8:ppn=16 (repeatable)",
			Value: funcValue(func(s string) error { return parseResourceList(s, &o.res) })},
		&ucli.GenericFlag{Name: "p", Usage: "`PRIORITY`, PBS's -1024..1023 (default 0): the job's place among its share's jobs (higher first); it never preempts a teammate's job",
			Value: funcValue(func(s string) error {
				p, err := parsePBSPriority(s)
				o.prio = &p
				return err
			})},
		&ucli.GenericFlag{Name: "o", Usage: "stdout `PATH` (default: $PBS_O_WORKDIR/NAME.oSEQ; a directory, or a path ending in /, gets that file name; ^array_index^ is the subjob index)",
			Value: strValue(&o.out, nonEmpty)},
		&ucli.GenericFlag{Name: "e", Usage: "stderr `PATH` (default: $PBS_O_WORKDIR/NAME.eSEQ)",
			Value: strValue(&o.errPath, nonEmpty)},
		&ucli.GenericFlag{Name: "j", Usage: "join streams `HOW`: oe (stderr into stdout), eo (stdout into stderr) or n",
			Value: strValue(&o.join, func(s string) error {
				if s != "oe" && s != "eo" && s != "n" {
					return fmt.Errorf("%q: want oe, eo or n", s)
				}
				return nil
			})},
		&ucli.GenericFlag{Name: "v", Usage: "export `VARS` to the job: VAR=value,VAR2 (a bare name passes its current value; repeatable)",
			Value: funcValue(func(s string) error {
				vs, err := parseVariableList(s)
				o.vars = append(o.vars, vs...)
				return err
			})},
		// Not Destination: urfave resets a destination to false whenever
		// it parses, and parseDirective parses once per #PBS line.
		&ucli.BoolFlag{Name: "V", Usage: "export the whole current environment to the job", DisableDefaultText: true,
			Action: setTrue(&o.allEnv)},
		&ucli.BoolFlag{Name: "h", Usage: "submit the job held (qrls releases it)", DisableDefaultText: true,
			Action: setTrue(&o.hold)},
		&ucli.BoolFlag{Name: "I", Usage: "interactive: wait for the job to start, then connect this terminal to a shell (or the command after --) in its container on its first node; qsub exits with its status. A script's #PBS lines still apply, its body does not run", DisableDefaultText: true,
			Action: setTrue(&o.interactive)},
		&ucli.GenericFlag{Name: "image", Usage: "container `IMAGE` to run in (default: the partition's); \"host\": the node's own root filesystem, read-only, where the partition allows it (host_image). Every image also gets the mounts the admin configured (sharqctl show config)",
			Value: strValue(&o.image, nonEmpty)},
		&ucli.GenericFlag{Name: "W", Usage: "`ATTR=VALUE`: depend=afterok:ID[:ID...][,afterany:ID...] (also afternotok, after), block=true (wait, exit with the job's status), grace=300 (checkpoint grace, seconds or a duration), umask=022 (the job's umask, octal; default 077: output files 0600)",
			Value: funcValue(func(s string) error { return parseQsubW(s, o) })},
		&ucli.GenericFlag{Name: "J", Usage: "array job `RANGE` start-end[:step][%max], e.g. 0-99%10 ($PBS_ARRAY_INDEX in each subjob; -t is Torque's name for it)",
			Value: arrayValue(o)},
		// Not an alias of -J: urfave copies an alias's value through
		// String(), which a funcValue does not keep.
		&ucli.GenericFlag{Name: "t", Hidden: true, Value: arrayValue(o)},
		&ucli.GenericFlag{Name: "S", Usage: "`SHELL` (absolute path) that runs the script (default: its #! line's interpreter, else /bin/sh); PBS's path@host,... lists use the entry without a host",
			Value: funcValue(func(s string) error {
				sh, err := parseShellList(s)
				o.shell = &sh
				return err
			})},
		&ucli.GenericFlag{Name: "d", Usage: "working `DIR` of the job (Torque; default: the current directory). It is also $PBS_O_WORKDIR and where the default output files go",
			Value: strValue(&o.workDir, nonEmpty)},
		&ucli.GenericFlag{Name: "a", Usage: "do not start before `TIME` [[[[CC]YY]MM]DD]hhmm[.SS], local time (2330: today or tomorrow at 23:30)",
			Value: funcValue(func(s string) error {
				t, err := ParseDateTime(s, sys.now(), sys.loc())
				o.notBefore = &t
				return err
			})},
	}
	if cmdline {
		fl = append(fl, &ucli.GenericFlag{Name: "C", Usage: "directive `PREFIX` (default: $PBS_DPREFIX or #PBS; \"\" reads no directives)",
			Value: strValue(&o.prefix, nil)})
	}
	for n, what := range qsubRefused {
		fl = append(fl, &ucli.BoolFlag{Name: n, Hidden: true, Action: func(*ucli.Context, bool) error {
			return usagef("-%s (%s) is not supported", n, what)
		}})
	}
	fl = append(fl, &ucli.BoolFlag{Name: "z", Usage: "do not print the job id", DisableDefaultText: true, Action: setTrue(&o.quiet)})
	for _, n := range []string{"A", "M", "P", "m", "r", "c", "k"} {
		n := n
		fl = append(fl, &ucli.GenericFlag{Name: n, Hidden: true, Value: funcValue(func(string) error {
			o.ignored = append(o.ignored, n)
			return nil
		})})
	}
	for i, f := range fl {
		switch f := f.(type) {
		case *ucli.GenericFlag:
			fl[i] = namedGeneric{f, f.Names()}
		case *ucli.BoolFlag:
			fl[i] = namedBool{f, f.Names()}
		}
	}
	return fl
}

// parseShellList reads -S path[@host][,path[@host]...]: the entry without
// a host (sharq's nodes share one image), else the first.
func parseShellList(s string) (string, error) {
	entries := strings.Split(s, ",")
	pick := entries[0]
	for _, e := range entries {
		if !strings.Contains(e, "@") {
			pick = e
			break
		}
	}
	path, _, _ := strings.Cut(strings.TrimSpace(pick), "@")
	if !filepath.IsAbs(path) || len(path) > 4096 {
		return "", fmt.Errorf("%q: want the absolute path of a shell, e.g. /bin/bash", s)
	}
	return path, nil
}

// arrayValue parses -J (and Torque's -t) into o.
func arrayValue(o *qsubOpts) funcValue {
	return func(s string) error {
		idx, m, err := ParseArray(s)
		o.array = &arraySpec{Indices: idx, Max: m}
		return err
	}
}

// setTrue is a boolean option's action: given, it sets *dst; never clears it.
func setTrue(dst *bool) func(*ucli.Context, bool) error {
	return func(_ *ucli.Context, v bool) error {
		*dst = *dst || v
		return nil
	}
}

func nonEmpty(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	return nil
}

// parsePBSPriority parses qsub and qalter's -p: PBS's job priority, which
// orders a share's jobs (see daemon/ctld/priority.go).
func parsePBSPriority(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < api.MinPBSPriority || p > api.MaxPBSPriority {
		return 0, fmt.Errorf("%q: want a priority from %d to %d (default 0)", s, api.MinPBSPriority, api.MaxPBSPriority)
	}
	return p, nil
}

// parsePriority parses sharq's own priority (sharqctl job priority).
func parsePriority(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 9999 {
		return 0, fmt.Errorf("%q: want a priority from 0 to 9999", s)
	}
	return p, nil
}

// validJobName refuses names PBS would not take, or that would not make a
// file name (NAME.oSEQ).
func validJobName(s string) error {
	if s == "" || len(s) > 236 {
		return fmt.Errorf("%q: a job name has 1 to 236 characters", s)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == '/' || r == 0x7f }); i >= 0 {
		return fmt.Errorf("%q: a job name has no blanks, control characters or /", s)
	}
	return nil
}

// defaultJobName makes a valid name out of a file name.
func defaultJobName(base string) string {
	name := strings.Map(func(r rune) rune {
		if r <= ' ' || r == '/' || r == 0x7f {
			return '_'
		}
		return r
	}, base)
	if len(name) > 236 {
		name = name[:236]
	}
	if name == "" || name == "." {
		return "STDIN"
	}
	return name
}

var qsubWAttrs = map[string]bool{"depend": true, "block": true, "grace": true, "umask": true}

// parseQsubW parses one -W value: attr=value pairs separated by commas,
// where the commas of a depend= list stay with it.
func parseQsubW(s string, o *qsubOpts) error {
	attrs, err := splitWAttrs(s, qsubWAttrs)
	if err != nil {
		return err
	}
	for _, kv := range attrs {
		switch kv[0] {
		case "depend":
			deps, err := ParseDepend(kv[1])
			if err != nil {
				return err
			}
			o.deps = &deps
		case "block":
			b, err := parseYesNo(kv[1])
			if err != nil {
				return fmt.Errorf("block=%s: %w", kv[1], err)
			}
			o.block = &b
		case "grace":
			d, err := conf.ParseDuration(kv[1])
			if err != nil {
				return fmt.Errorf("grace: %w", err)
			}
			o.grace = &d
		case "umask":
			if _, err := api.ParseUmask(kv[1]); err != nil {
				return err
			}
			o.umask = &kv[1]
		}
	}
	return nil
}

// splitWAttrs splits "depend=afterok:1,afterany:2,block=true" into
// attributes; a piece without "=" continues the previous value.
func splitWAttrs(s string, known map[string]bool) ([][2]string, error) {
	var out [][2]string
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	for _, piece := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(piece, "=")
		if !ok {
			if len(out) == 0 {
				return nil, fmt.Errorf("%q: want attribute=value", s)
			}
			out[len(out)-1][1] += "," + piece
			continue
		}
		k = strings.TrimSpace(k)
		if !known[k] {
			return nil, fmt.Errorf("unknown attribute %q (supported: %s)", k, strings.Join(sortedStrings(names), ", "))
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func parseYesNo(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "t", "yes", "y", "1":
		return true, nil
	case "false", "f", "no", "n", "0":
		return false, nil
	}
	return false, errors.New("want true or false")
}

// Qsub submits a job (qsub [options] script | qsub [options] -- command
// args) and prints its id.
func Qsub(ctx context.Context, args []string, sys *Sys) int {
	var cmd qsubOpts
	app := newApp(sys, "qsub", "submit a batch job",
		"qsub [options] [script]\n"+
			"qsub [options] -- command [args...]\n"+
			"qsub -I [options] [script] [-- command [args...]]",
		`Submits a job and prints its id (and nothing else), so that jid=$(qsub job.sh) works.
The script is read from stdin when no file is named. #PBS lines at the top of the
script set options too; options on the command line win over them. The job starts in
the current directory ($PBS_O_WORKDIR) with PBS_O_HOME, PBS_O_PATH, ... set.
Resources are per node: -l select=2:ngpus=8 is two nodes with 8 GPUs each.
-l place=group=rack keeps all the job's nodes in one rack (a level of its partition's
topology: sharqctl show topology); group=rack@2h for at most 2 hours of waiting, then
as few racks as possible; prefer_group=rack for as few racks as possible at once.

Examples:
   qsub -N train -q vision -l ngpus=4,mem=64gb,walltime=12:00:00 train.sh
   qsub -l select=2:ngpus=8 -W depend=afterok:123 -- torchrun train.py
   qsub -l select=8:ngpus=8,place=scatter:excl:group=rack@1h train.sh
   qsub -J 0-99%10 -W grace=5m sweep.sh
   echo 'nvidia-smi' | qsub -l ngpus=1 -W block=true
   qsub -I -q vision -l ngpus=8,walltime=2:00:00      (a shell on the job's node)
   echo nvidia-smi | qsub -I -l ngpus=1               (no terminal: plain pipes)`)
	app.Flags = qsubFlags(&cmd, sys, true)
	var pre []string
	app.Action = func(c *ucli.Context) error {
		rest := c.Args().Slice()
		i := len(pre) - len(rest)
		dashdash := i > 0 && pre[i-1] == "--"
		return qsubRun(c.Context, sys, &cmd, rest, dashdash)
	}
	if len(args) == 0 {
		args = []string{"qsub"}
	}
	valueOpts, boolOpts := flagKinds(app.Flags)
	// Torque takes options after the script name too.
	pre = append([]string{args[0]}, getoptWords(hoistOptions(args[1:], valueOpts, boolOpts), valueOpts, boolOpts)...)
	err := app.RunContext(ctx, pre)
	var ue usageError
	if errors.As(err, &ue) && !errors.Is(err, flag.ErrHelp) {
		// Name every bad option, not only the first.
		if all := optionProblems(sys, pre[1:], true); len(all) > 1 {
			err = usageError{errors.Join(all...)}
		}
	}
	return report(sys, app.Name, err)
}

// hoistOptions moves the options after a script name before it, as Torque
// reads them (qsub job.sh -l ngpus=1), each option word read as getopt
// reads it (qsub -hN name job.sh: -N's value is name, not an operand);
// after "--" nothing moves, since it is the command's.
func hoistOptions(args []string, valueOpts, boolOpts map[string]bool) []string {
	var opts, operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(append(opts, operands...), args[i:]...)
		case a == "-" || !strings.HasPrefix(a, "-"):
			operands = append(operands, a)
		default:
			words, wantsValue := getoptWord(a, valueOpts, boolOpts)
			opts = append(opts, words...)
			if wantsValue && i+1 < len(args) {
				i++
				opts = append(opts, args[i])
			}
		}
	}
	return append(opts, operands...)
}

// optionGroups splits split-up arguments (getoptWords' output) into one
// group per option with its value, and one per operand.
func optionGroups(args []string, valueOpts map[string]bool) [][]string {
	var out [][]string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		g := []string{a}
		name, _, hasEq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && valueOpts[name] && !hasEq && i+1 < len(args) {
			i++
			g = append(g, args[i])
		}
		out = append(out, g)
	}
	return out
}

// optionProblems parses args one option at a time into a scratch struct and
// returns every option's error. It runs only after a parse failed, to list
// all the problems at once.
func optionProblems(sys *Sys, args []string, cmdline bool) []error {
	var scratch qsubOpts
	flags := qsubFlags(&scratch, sys, cmdline)
	valueOpts, _ := flagKinds(flags)
	var out []error
	for _, g := range optionGroups(args, valueOpts) {
		if !strings.HasPrefix(g[0], "-") || g[0] == "-" {
			if !cmdline {
				out = append(out, fmt.Errorf("unexpected %q (a directive holds options only)", g[0]))
			}
			continue
		}
		app := newApp(sys, "qsub", "", "", "")
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		app.Flags = qsubFlags(&scratch, sys, cmdline)
		app.Action = func(*ucli.Context) error { return nil }
		if err := app.Run(append([]string{"qsub"}, g...)); err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				err = ue.err
			}
			out = append(out, err)
		}
	}
	return out
}

func qsubRun(ctx context.Context, sys *Sys, cmd *qsubOpts, rest []string, dashdash bool) error {
	if sys.Dir == "" {
		return errors.New("cannot determine the current directory")
	}
	job := api.JobSpec{WorkDir: sys.Dir}
	var defaultName string
	opts := &qsubOpts{}
	switch {
	case dashdash:
		if len(rest) == 0 {
			return usagef("no command after --")
		}
		job.Command = rest
		defaultName = defaultJobName(filepath.Base(rest[0]))
	case len(rest) > 1:
		return usagef("unexpected arguments after the script %s: %q (to run a command with arguments, use qsub [options] -- command args)", rest[0], rest[1:])
	case len(rest) == 0 && cmd.interactive:
		// qsub -I: stdin is the session's, not a script.
		defaultName = "STDIN"
	default:
		var (
			body  []byte
			err   error
			label = "stdin"
		)
		if len(rest) == 1 {
			label = rest[0]
			body, err = os.ReadFile(absPath(sys.Dir, rest[0]))
			defaultName = defaultJobName(filepath.Base(rest[0]))
		} else {
			if sys.Stdin == nil {
				return errors.New("no script given and no stdin to read one from")
			}
			body, err = io.ReadAll(io.LimitReader(sys.Stdin, api.MaxMessage))
			defaultName = "STDIN"
		}
		if err != nil {
			return fmt.Errorf("reading script: %w", err)
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return fmt.Errorf("script %s is empty", label)
		}
		if bytes.IndexByte(body, 0) >= 0 {
			return fmt.Errorf("script %s is a binary file; to run a program, use qsub [options] -- %s", label, label)
		}
		job.Script = string(body)
		prefix := DefaultDirectivePrefix
		if p, ok := sys.getenv("PBS_DPREFIX"); ok {
			prefix = p
		}
		if cmd.prefix != nil {
			prefix = *cmd.prefix
		}
		dirs, err := ParseDirectives(job.Script, prefix)
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		if err := parseDirectives(sys, opts, dirs, label, prefix); err != nil {
			return err
		}
	}
	opts.overlay(cmd)
	if opts.interactive {
		if opts.array != nil {
			return usagef("-I and -J: an interactive job cannot be an array job")
		}
		job.Interactive, job.Script = true, ""
	}
	for _, n := range dedupe(opts.ignored) {
		fmt.Fprintf(sys.Stderr, "qsub: warning: -%s (%s) is not supported and was ignored\n", n, qsubIgnored[n])
	}

	job.Name = defaultName
	if opts.name != nil {
		job.Name = *opts.name
	}
	if opts.queue != nil {
		job.Share = *opts.queue
	}
	job.Resources = opts.res.resources()
	if opts.workDir != nil {
		job.WorkDir = absPath(sys.Dir, *opts.workDir)
	}
	job.Env = jobEnv(sys.Environ, opts.allEnv, opts.vars, job.WorkDir, sys.Host)
	if opts.workDir != nil {
		job.Env["PBS_O_INITDIR"] = job.WorkDir
	}
	if opts.out != nil {
		job.Stdout = outputPath(sys.Dir, *opts.out)
	}
	if opts.errPath != nil {
		job.Stderr = outputPath(sys.Dir, *opts.errPath)
	}
	if opts.join != nil && (*opts.join == "oe" || *opts.join == "eo") {
		job.Join = *opts.join // the controller joins the paths (api.OutputPaths)
	}
	if opts.image != nil {
		job.Image = *opts.image
	}
	if opts.shell != nil && len(job.Command) == 0 && !job.Interactive {
		job.Shell = *opts.shell
	}
	if opts.grace != nil {
		job.Grace = *opts.grace
	}
	if opts.umask != nil {
		job.Umask = *opts.umask
	}
	if opts.hold {
		job.Hold = "u"
	}
	if opts.notBefore != nil {
		job.NotBefore = *opts.notBefore
	}
	if opts.deps != nil {
		job.Deps = *opts.deps
	}
	if opts.array != nil {
		job.ArrayIndices, job.ArrayMax = opts.array.Indices, opts.array.Max
	}

	resp, err := call(ctx, sys, api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: job, PBSPriority: opts.prio}})
	if err != nil {
		return err
	}
	if resp.JobID == "" {
		return errors.New("sharqctld accepted the job but returned no job id")
	}
	if job.Interactive {
		ctx, stop := sys.interrupts(ctx)
		defer stop()
		return interactive(ctx, sys, resp.JobID)
	}
	if !opts.quiet {
		fmt.Fprintln(sys.Stdout, resp.JobID)
	}
	if opts.block != nil && *opts.block {
		ctx, stop := sys.interrupts(ctx)
		defer stop()
		return waitJob(ctx, sys, resp.JobID)
	}
	return nil
}

// parseDirectives applies the #PBS lines' options to opts, in order. When
// every line is whole (options only, each option that takes a value with
// its value on its own line), all lines go through one run of the option
// parser: the same options in the same order as a run per line, for the
// cost of one (urfave builds its flag set anew at every run, and that is
// most of a directive's cost). Otherwise, or when that run fails, opts is
// parsed again from where it was, a run per line, which names each
// problem's line (label line N: prefix args: problem).
func parseDirectives(sys *Sys, opts *qsubOpts, dirs []Directive, label, prefix string) error {
	if len(dirs) > 1 {
		lines := make([][]string, len(dirs))
		for i, d := range dirs {
			lines[i] = d.Args
		}
		try := *opts
		if parseOptions(sys, &try, lines) == nil {
			*opts = try
			return nil
		}
	}
	return parseDirectivesPerLine(sys, opts, dirs, label, prefix)
}

// parseDirectivesPerLine applies the #PBS lines' options to opts with a
// run of the option parser per line, and names each problem's line.
func parseDirectivesPerLine(sys *Sys, opts *qsubOpts, dirs []Directive, label, prefix string) error {
	var problems []error
	for _, d := range dirs {
		if err := parseDirective(sys, opts, d); err != nil {
			where := fmt.Sprintf("%s line %d: %s %s", label, d.Line, prefix, strings.Join(d.Args, " "))
			all := optionProblems(sys, d.Args, false)
			if len(all) < 2 {
				all = []error{err}
			}
			for _, e := range all {
				problems = append(problems, fmt.Errorf("%s: %w", where, e))
			}
		}
	}
	return errors.Join(problems...)
}

// parseDirective applies one #PBS line's options to opts.
func parseDirective(sys *Sys, opts *qsubOpts, d Directive) error {
	return parseOptions(sys, opts, [][]string{d.Args})
}

// errNotWhole is parseOptions' answer to lines that cannot be parsed as
// one: one holds something other than options, or ends with an option
// that waits for its value.
var errNotWhole = errors.New("directive lines are not whole")

// parseOptions applies directive lines' options to opts in one run of the
// option parser. With more than one line, every line must be whole (else
// errNotWhole, and opts is untouched): joined, a value option left at the
// end of one line would take the next line's first word.
func parseOptions(sys *Sys, opts *qsubOpts, lines [][]string) error {
	app := newApp(sys, "qsub", "", "", "")
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	app.Flags = qsubFlags(opts, sys, false)
	app.Action = func(c *ucli.Context) error {
		if c.NArg() > 0 {
			return fmt.Errorf("unexpected %q (a directive holds options only)", c.Args().First())
		}
		return nil
	}
	valueOpts, boolOpts := flagKinds(app.Flags)
	args := []string{"qsub"}
	for _, line := range lines {
		split := getoptWords(line, valueOpts, boolOpts)
		if len(lines) > 1 {
			if slices.Contains(split, "--") {
				return errNotWhole
			}
			for _, g := range optionGroups(split, valueOpts) {
				name, _, hasEq := strings.Cut(strings.TrimLeft(g[0], "-"), "=")
				if !strings.HasPrefix(g[0], "-") || g[0] == "-" || g[0] == "--" || valueOpts[name] && !hasEq && len(g) < 2 {
					return errNotWhole
				}
			}
		}
		args = append(args, split...)
	}
	err := app.Run(args)
	var ue usageError
	if errors.As(err, &ue) {
		return ue.err
	}
	return err
}

// absPath makes p absolute against dir.
func absPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// outputPath resolves a -o/-e value: a PBS "host:" prefix is dropped, a
// relative path is made absolute against dir, and a directory (a path
// ending in "/", whether it exists yet or not, or an existing directory)
// gets a trailing slash, which tells the controller to put the default file
// name (NAME.oSEQ, as PBS names it) in it.
func outputPath(dir, p string) string {
	if host, rest, ok := strings.Cut(p, ":"); ok && host != "" && !strings.Contains(host, "/") && rest != "" {
		p = rest
	}
	abs := absPath(dir, p)
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.") || p == "." {
		return strings.TrimSuffix(abs, "/") + "/"
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return strings.TrimSuffix(abs, "/") + "/"
	}
	return abs
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
