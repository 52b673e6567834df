package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// qstatOpts are qstat's options.
type qstatOpts struct {
	alt, full, finished, subjobs, nodes, queues, est bool
	server, comments, wide, gb, mw, oneLine, history bool
	idle, running, arrays, percent                   bool
	format, delim, users, since                      string
}

// Output formats of qstat -f (-F).
const (
	formatText      = ""
	formatJSON      = "json"
	formatDSV       = "dsv"
	formatSharqJSON = "sharq-json"
)

// Qstat shows jobs (qstat [-a|-i|-r|-H|-T|-f [-F json|dsv]] [ID... |
// DESTINATION...]), shares (qstat -Q [SHARE...]) or the server (qstat -B).
func Qstat(ctx context.Context, args []string, sys *Sys) int {
	var o qstatOpts
	app := newApp(sys, "qstat", "show jobs, shares and the server",
		"qstat [-f [-F json|dsv [-D DELIM]] | -w] [-J] [-p] [-t] [-x] [ID... | DESTINATION...]\n"+
			"qstat [-a | -i | -r | -H | -T] [-J] [-t] [-u USER] [-n] [-s] [-G | -M] [-1] [-w] [ID... | DESTINATION...]\n"+
			"qstat -Q [SHARE...]\n"+
			"qstat -B [-f [-F json|dsv]]",
		`Shows jobs in PBS's columns and state letters: Q queued, R running, H held,
W waiting for its -a time, E exiting, F finished (with -x), B array with running
subjobs. With -x and no ids, jobs that left the spool (kept 7 days) come from the
job history: those that ended in the last 30 days or --since WHEN, the newest
2000, your own only unless the site lets users see all (admins see all).
Output to a pipe has PBS's fixed widths and no colour; on a terminal the
columns fit their contents. Single-letter options combine as in PBS (-fx, -an1).

An operand is a job id (123, 123.cluster, 124[], 124[3-5]) or a destination:
SHARE (PBS queue), SHARE@SERVER or @SERVER, the jobs in that share or all jobs
(sharq has one server: SERVER is not checked). A finished job named without -x
or -H is refused as PBS does (exit 35, "Job has finished"); an unknown one
exits 153 ("Unknown Job Id").

-a, -i, -r, -H, -u, -n, -s, -G and -M show PBS Pro's alternative table with
sharq's GPU column and pending reason; -i keeps jobs not running (Q H W E),
-r running ones, -H finished ones (it implies -x).

qstat -Q shows each share (PBS queue): its quota of GPUs, how many it uses, how many
it borrowed from other shares and lent to them, its pending and running jobs and
how many of its jobs were preempted. qstat -B shows the server: its jobs by state.

qstat -T lists pending jobs with the start time the scheduler estimates for
them: with backfill on, each share's first blocked job and the first blocked
borrower hold a reservation (qstat -f shows it as estimated.start_time and
estimated.exec_vnode); other pending jobs show "--".

Examples:
   qstat                     # your and others' current jobs
   qstat -a -n               # with GPUs, reasons and where each job runs
   qstat -f 123              # every attribute of job 123
   qstat -fx 123             # the same once it finished
   qstat -f -F json 123 | jq '.Jobs[].job_state'
   qstat -x -u alice         # alice's jobs, finished ones too
   qstat -x --since 2026-01-01   # with the history's jobs that ended since then
   qstat -t 124[]            # the subjobs of array 124
   qstat vision              # the jobs of share vision
   qstat -Q                  # shares: who borrows, who lends
   qstat -T                  # pending jobs and when they are expected to start`)
	app.Flags = []ucli.Flag{
		&ucli.BoolFlag{Name: "a", Usage: "alternative table: nodes, GPUs, memory, walltime, elapsed time, pending reason", Destination: &o.alt, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "i", Usage: "alternative table of the jobs not running (queued, held, waiting, exiting)", Destination: &o.idle, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "r", Usage: "alternative table of the running jobs", Destination: &o.running, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "H", Usage: "alternative table of finished jobs only (implies -x)", Destination: &o.history, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "f", Usage: "full: every attribute, as OpenPBS names them, and sharq's own (GPUs, share, preemptions, history)", Destination: &o.full, DisableDefaultText: true},
		&ucli.StringFlag{Name: "F", Usage: "with -f, output `FORMAT`: json (OpenPBS's), dsv (one line per job, attributes separated by -D), sharq-json (sharq's own job records)", Destination: &o.format},
		&ucli.StringFlag{Name: "D", Usage: "with -F dsv, the `DELIMITER` between attributes (default |)", Destination: &o.delim},
		&ucli.BoolFlag{Name: "x", Usage: "include finished jobs", Destination: &o.finished, DisableDefaultText: true},
		&ucli.StringFlag{Name: "since", Usage: "with -x, the history's jobs that ended since `WHEN` (a date, date-time, RFC 3339 or 7d; default 30d)", Destination: &o.since},
		&ucli.StringFlag{Name: "u", Usage: "only jobs of `USER` (a comma-separated list is accepted)", Destination: &o.users},
		&ucli.BoolFlag{Name: "n", Usage: "show the nodes and GPU indices of each job (gpu01/0-3+gpu02/0-3)", Destination: &o.nodes, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "s", Usage: "show each job's comment (why it waits, how it ended) under it", Destination: &o.comments, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "1", Usage: "with -n or -s, on the job's own line", Destination: &o.oneLine, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "w", Usage: "wide: no column is cut short", Destination: &o.wide, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "G", Usage: "memory in gigabytes", Destination: &o.gb, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "M", Usage: "memory in megawords (8-byte words)", Destination: &o.mw, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "J", Usage: "array jobs only", Destination: &o.arrays, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "p", Usage: "percentage of its walltime a job has used, instead of Time Use (-- for arrays and jobs without one)", Destination: &o.percent, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "t", Usage: "show array subjobs (otherwise an array is one row)", Destination: &o.subjobs, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "Q", Usage: "show shares (PBS queues): quota, in use, borrowed, lent", Destination: &o.queues, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "B", Usage: "show the server: its jobs by state (-f: as attributes)", Destination: &o.server, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "T", Usage: "pending jobs with their estimated start time (PBS Pro's qstat -T)", Destination: &o.est, DisableDefaultText: true},
	}
	app.Action = func(c *ucli.Context) error {
		if err := o.check(); err != nil {
			return err
		}
		operands := c.Args().Slice()
		switch {
		case o.queues:
			return qstatShares(c.Context, sys, &o, operands)
		case o.server:
			return qstatServer(c.Context, sys, &o, operands)
		}
		return qstatJobs(c.Context, sys, &o, operands)
	}
	return run(ctx, app, sys, args)
}

// check refuses the combinations PBS refuses (and those sharq cannot show).
func (o *qstatOpts) check() error {
	o.format = strings.ToLower(o.format)
	switch o.format {
	case formatText, formatJSON, formatDSV, formatSharqJSON:
	default:
		return usagef("-F %s: the formats are json, dsv and sharq-json", o.format)
	}
	if o.format != formatText && !o.full {
		return usagef("-F %s goes with -f", o.format)
	}
	if o.delim != "" && o.format != formatDSV {
		return usagef("-D goes with -F dsv")
	}
	if o.wide && o.format != formatText {
		return usagef("option w cannot be used with -F")
	}
	if o.queues && o.server {
		return usagef("-B and -Q do not go together")
	}
	if o.gb && o.mw {
		return usagef("-G and -M do not go together")
	}
	if o.oneLine && !o.nodes && !o.comments {
		return usagef("-1 goes with -n or -s")
	}
	var tables []string
	for _, t := range []struct {
		on   bool
		name string
	}{{o.alt, "-a"}, {o.idle, "-i"}, {o.running, "-r"}, {o.history, "-H"}, {o.est, "-T"}} {
		if t.on {
			tables = append(tables, t.name)
		}
	}
	if len(tables) > 1 {
		return usagef("%s do not go together", strings.Join(tables, " and "))
	}
	if o.full {
		for _, t := range []struct {
			on   bool
			name string
		}{{o.alt, "-a"}, {o.est, "-T"}, {o.nodes, "-n"}, {o.comments, "-s"}, {o.gb, "-G"}, {o.mw, "-M"}} {
			if t.on {
				return usagef("%s and -f do not go together", t.name)
			}
		}
	}
	if o.est && (o.finished || o.history) {
		return usagef("-T goes with none of -a, -f and -x")
	}
	if o.since != "" && !o.finished && !o.history {
		return usagef("--since goes with -x")
	}
	return nil
}

// altTable says whether the jobs show in PBS Pro's alternative table.
func (o *qstatOpts) altTable() bool {
	return o.alt || o.idle || o.running || o.history || o.users != "" || o.nodes || o.comments || o.gb || o.mw
}

// keepState says whether a job in state s passes -i, -r and -H.
func (o *qstatOpts) keepState(s api.State) bool {
	switch {
	case o.idle:
		return s == api.StateQueued || s == api.StateHeld || s == api.StateWaiting || s == api.StateExiting
	case o.running:
		return s == api.StateRunning
	case o.history:
		return s == api.StateFinished
	}
	return true
}

// destination is a qstat operand that names no job: SHARE, SHARE@SERVER
// or @SERVER.
type destination struct{ share, server string }

// splitOperands tells job ids (they begin with a digit, as PBS's
// pbs_isjobid reads them) from destinations.
func splitOperands(operands []string) (ids []string, dests []destination, err error) {
	for _, op := range operands {
		if op != "" && op[0] >= '0' && op[0] <= '9' {
			ids = append(ids, op)
			continue
		}
		share, server, _ := strings.Cut(op, "@")
		if op == "" || op == "@" || strings.ContainsAny(op, " \t\n/") || strings.Contains(server, "@") {
			return nil, nil, fmt.Errorf("illegally formed destination: %s", op)
		}
		dests = append(dests, destination{share, server})
	}
	return ids, dests, nil
}

func qstatJobs(ctx context.Context, sys *Sys, o *qstatOpts, operands []string) error {
	named, dests, err := splitOperands(operands)
	if err != nil {
		return usageError{err}
	}
	ids, err := expandJobIDs(named)
	if err != nil {
		return usageError{err}
	}
	finished := o.finished || o.history
	base := api.StatFilter{Finished: finished, Subjobs: o.subjobs, Full: o.full, Summary: !o.full}
	if o.since != "" {
		if base.Since, err = ParseWhen(o.since, sys.now(), sys.loc()); err != nil {
			return usageError{fmt.Errorf("--since: %w", err)}
		}
	}
	var userSet []string
	if o.users != "" {
		userSet = strings.Split(o.users, ",")
		if len(userSet) == 1 {
			base.User = o.users
		}
	}
	// namedSub says whether a subjob was named itself (qstat 103[4]): it
	// shows without -t.
	namedSub := func(id string) bool {
		return slices.Contains(ids, id) || slices.Contains(ids, strings.TrimSuffix(id, "."+serverOf(id)))
	}
	keep := func(user, parent, id string, s api.State) bool {
		return (len(userSet) == 0 || slices.Contains(userSet, user)) && (o.subjobs || parent == "" || namedSub(id)) &&
			o.keepState(s) && (!o.arrays || parent != "" || strings.Contains(id, "[]"))
	}
	code := ExitOK
	// Each answer with the shares its jobs must be in (nil: any).
	type answer struct {
		resp   *api.Response
		shares map[string]bool
		named  bool // the jobs the operands named
	}
	var resps []answer
	if len(ids) > 0 {
		// Named jobs are asked for with their history, so that a finished
		// one is told apart from an unknown one, as PBS does.
		f := base
		f.IDs, f.Finished, f.User = ids, true, ""
		resp, err := call(ctx, sys, api.Request{Op: api.OpStat, Stat: &f})
		if code, err = jobErrors(sys, "qstat", resp, err, ids); err != nil {
			return err
		}
		if resp != nil {
			resps = append(resps, answer{resp, nil, true})
		}
	}
	if len(dests) > 0 || len(ids) == 0 && len(named) == 0 {
		shares, err := destShares(ctx, sys, "qstat", dests)
		if err != nil {
			return err
		}
		if len(dests) == 0 || shares != nil || slices.ContainsFunc(dests, func(d destination) bool { return d.share == "" }) {
			f := base
			resp, err := call(ctx, sys, api.Request{Op: api.OpStat, Stat: &f})
			if err != nil {
				return err
			}
			if slices.ContainsFunc(dests, func(d destination) bool { return d.share == "" }) {
				shares = nil // @SERVER: all its jobs
			}
			resps = append(resps, answer{resp, shares, false})
		}
	}
	// A finished job named without -x or -H: PBS's PBSE_HISTJOBID.
	gone := func(named bool, id string, s api.State) bool {
		if !named || s != api.StateFinished || finished {
			return false
		}
		fmt.Fprintf(sys.Stderr, "qstat: %s Job has finished, use -x or -H to obtain historical job information\n", id)
		if code == ExitOK {
			code = ExitFinishedJob
		}
		return true
	}
	if o.full {
		var jobs []api.Job
		for _, a := range resps {
			for _, j := range a.resp.Jobs {
				if (a.shares == nil || a.shares[j.Share]) && !gone(a.named, j.ID, j.State) && keep(j.Owner.User, j.ArrayParent, j.ID, j.State) {
					jobs = append(jobs, j)
				}
			}
		}
		switch o.format {
		case formatJSON:
			err = writeJobPBSJSON(sys.Stdout, jobs, sys)
		case formatDSV:
			err = writeJobDSV(sys.Stdout, jobs, sys, o.delim)
		case formatSharqJSON:
			err = writeJobJSON(sys.Stdout, jobs, sys)
		default:
			err = writeJobFull(sys.Stdout, jobs, sys)
		}
	} else {
		var kept []api.JobSummary
		for _, a := range resps {
			rows, perr := api.ParseSummaries(string(a.resp.Summary))
			if perr != nil {
				return perr
			}
			for _, r := range rows {
				if (a.shares == nil || a.shares[r.Share]) && !gone(a.named, r.ID, r.State) && keep(r.User, r.ArrayParent, r.ID, r.State) &&
					(!o.est || pendingState(r.State) || r.State == api.StateArray && !r.EstStart.IsZero()) {
					kept = append(kept, r)
				}
			}
		}
		view := tableView{wide: o.wide, nodes: o.nodes, comments: o.comments, oneLine: o.oneLine, gb: o.gb, mw: o.mw, percent: o.percent}
		switch {
		case len(kept) == 0 && !o.est: // PBS prints nothing; -T its header
		case o.est:
			err = writeJobTableEst(sys.Stdout, kept, sys, view)
		case o.altTable():
			err = writeJobTableAlt(sys.Stdout, kept, sys, view)
		default:
			err = writeJobTable(sys.Stdout, kept, sys, view)
		}
	}
	if err != nil {
		return err
	}
	if code != ExitOK {
		return exitStatus(code)
	}
	return nil
}

// destShares checks the shares that destinations name: nil when they name
// none (only @SERVER), else the set of them. An unknown one is PBS's
// "Unknown queue" (exit 170).
func destShares(ctx context.Context, sys *Sys, name string, dests []destination) (map[string]bool, error) {
	var names []string
	for _, d := range dests {
		if d.share != "" {
			names = append(names, d.share)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	resp, err := call(ctx, sys, api.Request{Op: api.OpShares})
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, n := range names {
		if !slices.ContainsFunc(resp.Shares, func(s api.ShareStatus) bool { return s.Name == n }) {
			fmt.Fprintf(sys.Stderr, "%s: Unknown queue %s\n", name, n)
			return nil, exitStatus(ExitUnknownQueue)
		}
		set[n] = true
	}
	return set, nil
}

func qstatShares(ctx context.Context, sys *Sys, o *qstatOpts, names []string) error {
	resp, err := call(ctx, sys, api.Request{Op: api.OpShares})
	if err != nil {
		return err
	}
	shares := resp.Shares
	if len(names) > 0 {
		shares = nil
		for _, n := range names {
			n, _, _ = strings.Cut(n, "@") // SHARE@SERVER: sharq has one server
			i := slices.IndexFunc(resp.Shares, func(s api.ShareStatus) bool { return s.Name == n })
			if i < 0 {
				fmt.Fprintf(sys.Stderr, "qstat: Unknown queue %s\n", n)
				return exitStatus(ExitUnknownQueue)
			}
			shares = append(shares, resp.Shares[i])
		}
	}
	if o.full {
		server := ""
		if o.format == formatJSON {
			server, _ = clusterNames(ctx, sys)
		}
		return writeSharesFull(sys.Stdout, shares, server, sys, o.format, o.delim)
	}
	return writeShareTable(sys.Stdout, shares, sys)
}

// jobErrors prints the per-job failures of a request as PBS words them and
// returns the exit status they mean. Failures that are not the
// controller's answer (no connection) come back as the error.
func jobErrors(sys *Sys, name string, resp *api.Response, err error, ids []string) (int, error) {
	if err == nil {
		return ExitOK, nil
	}
	var ae *api.Error
	if resp == nil || !errors.As(err, &ae) {
		return 0, err
	}
	errs := resp.Errors
	if len(errs) == 0 {
		errs = []api.Error{*ae}
	}
	id := ""
	if len(ids) == 1 {
		id = ids[0]
	}
	code := ExitOK
	for _, e := range errs {
		fmt.Fprintf(sys.Stderr, "%s: %s\n", name, pbsJobError(e, id))
		if code == ExitOK {
			code = codeStatus(e.Code)
		}
	}
	return code, nil
}

// jobsResult is jobErrors as a command's result: nil when the request
// succeeded for every job, else the error, or the exit status of the
// first job's failure (each failure already printed as PBS words it).
func jobsResult(sys *Sys, name string, resp *api.Response, err error, ids []string) error {
	code, err := jobErrors(sys, name, resp, err, ids)
	if err != nil {
		return err
	}
	if code != ExitOK {
		return exitStatus(code)
	}
	return nil
}

// pendingState says whether a job in state s waits to start (qstat -T).
func pendingState(s api.State) bool {
	return s == api.StateQueued || s == api.StateHeld || s == api.StateWaiting
}
