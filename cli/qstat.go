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

// Qstat shows jobs (qstat [-a|-f [-F json]] [-x] [-t] [-n] [-u user]
// [ID...]) or shares (qstat -Q [SHARE...]).
func Qstat(ctx context.Context, args []string, sys *Sys) int {
	var (
		alt, full, finished, subjobs, nodes, queues, est bool
		format, users, since                             string
	)
	app := newApp(sys, "qstat", "show jobs and shares",
		"qstat [-a | -f [-F json] | -T] [-n] [-t] [-x [--since WHEN]] [-u USER] [ID...]\n"+
			"qstat -Q [SHARE...]",
		`Shows jobs in PBS's columns and state letters: Q queued, R running, H held,
W waiting for its -a time, E exiting, F finished (with -x), B array with running
subjobs. With -x and no ids, jobs that left the spool (kept 7 days) come from the
job history: those that ended in the last 30 days or --since WHEN, the newest
2000, your own only unless the site lets users see all (admins see all).
Output to a pipe has PBS's fixed widths and no colour; on a terminal the
columns fit their contents.

qstat -Q shows each share (PBS queue): its quota of GPUs, how many it uses, how many
it borrowed from other shares and lent to them, its pending and running jobs and
how many of its jobs were preempted.

qstat -T lists pending jobs with the start time the scheduler estimates for
them: with backfill on, each share's first blocked job and the first blocked
borrower hold a reservation (qstat -f shows it as estimated.start_time and
estimated.exec_vnode); other pending jobs show "--".

Examples:
   qstat                     # your and others' current jobs
   qstat -a -n               # with GPUs, reasons and where each job runs
   qstat -f 123              # every attribute of job 123
   qstat -f -F json 123 | jq '.Jobs[].state'
   qstat -x -u alice         # alice's jobs, finished ones too
   qstat -x --since 2026-01-01   # with the history's jobs that ended since then
   qstat -t 124[]            # the subjobs of array 124
   qstat -Q                  # shares: who borrows, who lends
   qstat -T                  # pending jobs and when they are expected to start`)
	app.Flags = []ucli.Flag{
		&ucli.BoolFlag{Name: "a", Usage: "alternative table: nodes, GPUs, memory, walltime, elapsed time, pending reason", Destination: &alt, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "f", Usage: "full: every attribute, including preemptions and history", Destination: &full, DisableDefaultText: true},
		&ucli.StringFlag{Name: "F", Usage: "with -f, output `FORMAT`: json (the job records)", Destination: &format},
		&ucli.BoolFlag{Name: "x", Usage: "include finished jobs", Destination: &finished, DisableDefaultText: true},
		&ucli.StringFlag{Name: "since", Usage: "with -x, the history's jobs that ended since `WHEN` (a date, date-time, RFC 3339 or 7d; default 30d)", Destination: &since},
		&ucli.StringFlag{Name: "u", Usage: "only jobs of `USER` (a comma-separated list is accepted)", Destination: &users},
		&ucli.BoolFlag{Name: "n", Usage: "show the nodes and GPU indices of each job (gpu01/0-3+gpu02/0-3)", Destination: &nodes, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "t", Usage: "show array subjobs (otherwise an array is one row)", Destination: &subjobs, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "Q", Usage: "show shares (PBS queues): quota, in use, borrowed, lent", Destination: &queues, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "T", Usage: "pending jobs with their estimated start time (PBS Pro's qstat -T)", Destination: &est, DisableDefaultText: true},
	}
	app.Action = func(c *ucli.Context) error {
		operands := c.Args().Slice()
		if queues {
			return qstatShares(c.Context, sys, operands)
		}
		if format != "" && format != "json" {
			return usagef("-F %s: the only format is json", format)
		}
		if format != "" && !full {
			return usagef("-F json goes with -f")
		}
		if full && alt {
			return usagef("-a and -f do not go together")
		}
		if est && (full || alt || finished) {
			return usagef("-T goes with none of -a, -f and -x")
		}
		ids, err := expandJobIDs(operands)
		if err != nil {
			return usageError{err}
		}
		filter := &api.StatFilter{IDs: ids, Finished: finished, Subjobs: subjobs, Full: full, Summary: !full}
		if since != "" {
			if !finished {
				return usagef("--since goes with -x")
			}
			if filter.Since, err = ParseWhen(since, sys.now(), sys.loc()); err != nil {
				return usageError{fmt.Errorf("--since: %w", err)}
			}
		}
		var userSet []string
		if users != "" {
			userSet = strings.Split(users, ",")
			if len(userSet) == 1 {
				filter.User = users
			}
		}
		resp, err := call(c.Context, sys, api.Request{Op: api.OpStat, Stat: filter})
		code, err := jobErrors(sys, "qstat", resp, err, ids)
		if err != nil {
			return err
		}
		keep := func(user, parent string) bool {
			return (len(userSet) <= 1 || slices.Contains(userSet, user)) && (subjobs || parent == "")
		}
		if full {
			jobs := resp.Jobs[:0]
			for _, j := range resp.Jobs {
				if keep(j.Owner.User, j.ArrayParent) {
					jobs = append(jobs, j)
				}
			}
			if format == "json" {
				err = writeJobJSON(sys.Stdout, jobs, sys)
			} else {
				err = writeJobFull(sys.Stdout, jobs, sys)
			}
		} else {
			rows, perr := api.ParseSummaries(string(resp.Summary))
			if perr != nil {
				return perr
			}
			kept := rows[:0]
			for _, r := range rows {
				if keep(r.User, r.ArrayParent) && (!est || pendingState(r.State) || r.State == api.StateArray && !r.EstStart.IsZero()) {
					kept = append(kept, r)
				}
			}
			switch {
			case len(kept) == 0 && !est: // PBS prints nothing; -T its header
			case est:
				err = writeJobTableEst(sys.Stdout, kept, sys)
			case alt:
				err = writeJobTableAlt(sys.Stdout, kept, sys, nodes)
			default:
				err = writeJobTable(sys.Stdout, kept, sys, nodes)
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
	return run(ctx, app, sys, args)
}

func qstatShares(ctx context.Context, sys *Sys, names []string) error {
	resp, err := call(ctx, sys, api.Request{Op: api.OpShares})
	if err != nil {
		return err
	}
	shares := resp.Shares
	if len(names) > 0 {
		shares = nil
		for _, n := range names {
			i := slices.IndexFunc(resp.Shares, func(s api.ShareStatus) bool { return s.Name == n })
			if i < 0 {
				//lint:ignore ST1005 PBS's own wording, which scripts match
				return fmt.Errorf("Unknown queue %s", n)
			}
			shares = append(shares, resp.Shares[i])
		}
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

// pendingState says whether a job in state s waits to start (qstat -T).
func pendingState(s api.State) bool {
	return s == api.StateQueued || s == api.StateHeld || s == api.StateWaiting
}
