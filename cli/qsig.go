package cli

import (
	"context"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// Qsig sends a signal to running jobs' processes (qsig [-s SIGNAL] ID...).
func Qsig(ctx context.Context, args []string, sys *Sys) int {
	var sig string
	app := newApp(sys, "qsig", "send a signal to running jobs",
		"qsig [-s SIGNAL] ID...",
		`Sends a signal to every process of each running job, on every node of the job,
as PBS's qsig: by default SIGTERM. SIGNAL is a name with or without SIG (USR1,
SIGUSR1) or a number (10). Only the owner (or an admin) may signal a job, and only
a running job can be signalled: a queued, held, finished or stopping job is refused
(exit 168, "Request invalid for state of job"). The job's history (tracejob) records
each signal and who sent it. What the job does with the signal is its own affair: a
job that exits on it ends as any job that exits (qrerun puts one back in the queue).
PBS's suspend and resume (and the stop signals STOP, TSTP, TTIN, TTOU) are refused:
sharq does not suspend jobs, since a suspended job would keep its GPUs.

Examples:
   qsig -s USR1 123           # ask the job to checkpoint, if it traps USR1
   qsig 123 124               # SIGTERM
   qsig -s 2 '125[]'          # SIGINT to the running subjobs of an array`)
	app.Flags = []ucli.Flag{
		&ucli.StringFlag{Name: "s", Usage: "send `SIGNAL` (name or number)", Value: "SIGTERM", Destination: &sig},
	}
	app.Action = func(c *ucli.Context) error {
		if c.NArg() == 0 {
			return usagef("no job id given")
		}
		s, err := api.ParseSignal(sig)
		if err != nil {
			return usageError{err}
		}
		ids, err := expandJobIDs(c.Args().Slice())
		if err != nil {
			return usageError{err}
		}
		resp, err := call(c.Context, sys, api.Request{Op: api.OpSignal, IDs: ids, Signal: s})
		return jobsResult(sys, "qsig", resp, err, ids)
	}
	return run(ctx, app, sys, args)
}
