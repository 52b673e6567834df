package cli

import (
	"context"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// Qmove moves waiting jobs to another share (qmove DESTINATION ID...).
func Qmove(ctx context.Context, args []string, sys *Sys) int {
	app := newApp(sys, "qmove", "move waiting jobs to another share",
		"qmove DESTINATION ID...",
		`Moves each job that waits (queued, held, or waiting for its -a time; an array
before any of its subjobs has started) to another share (PBS queue) of its partition:
it waits there as one of that share's jobs, at the place its priorities and submission
give it, on that share's quota. DESTINATION is SHARE or SHARE@SERVER. The owner (or an
admin) may move a job, to a share the owner may submit to (an admin: any share); the
share must be enabled and able to hold the job. A running or finished job is refused
(exit 168, "Request invalid for state of job"), as is a subjob (it moves with its
array); an unknown share exits 170 ("Unknown queue"), an unknown job 153. A job keeps
its sharq priority if it was above its old share's default and an admin moves it;
otherwise it gets the new share's default.

Examples:
   qmove vision 123
   qmove nlp@lab 123 124 '125[]'`)
	app.Action = func(c *ucli.Context) error {
		if c.NArg() < 2 {
			return usagef("give a destination and at least one job id")
		}
		operands := c.Args().Slice()
		ids0, dests, err := splitOperands(operands[:1])
		if err != nil {
			return usageError{err}
		}
		if len(ids0) != 0 || dests[0].share == "" {
			return usagef("%q is not a destination (SHARE or SHARE@SERVER)", operands[0])
		}
		ids, err := expandJobIDs(operands[1:])
		if err != nil {
			return usageError{err}
		}
		if _, err := destShares(c.Context, sys, "qmove", dests); err != nil {
			return err
		}
		resp, err := call(c.Context, sys, api.Request{Op: api.OpMove, IDs: ids, Share: operands[0]})
		return jobsResult(sys, "qmove", resp, err, ids)
	}
	return run(ctx, app, sys, args)
}
