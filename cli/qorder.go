package cli

import (
	"context"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// Qorder exchanges the places of two waiting jobs of one share (qorder ID ID).
func Qorder(ctx context.Context, args []string, sys *Sys) int {
	app := newApp(sys, "qorder", "exchange the places of two waiting jobs",
		"qorder ID ID",
		`Exchanges the places of two waiting jobs (queued, held or waiting for their -a
time) of one share in its queue, as PBS's qorder: each takes the other's place, and
with it the other's priorities (qstat -f shows Priority and sharq_priority exchanged),
so the one that was behind now goes first. The caller must own both jobs (or be an
admin); jobs of different sharq priorities are an admin's to exchange. Running or
finished jobs are refused (exit 168, "Request invalid for state of job"), as are
arrays and subjobs and two jobs of different shares; an unknown job exits 153.

Examples:
   qorder 123 130        # 130 goes where 123 was, 123 where 130 was`)
	app.Action = func(c *ucli.Context) error {
		if c.NArg() != 2 {
			return usagef("give two job ids")
		}
		ids, err := expandJobIDs(c.Args().Slice())
		if err != nil {
			return usageError{err}
		}
		if len(ids) != 2 {
			return usagef("give two jobs, not ranges of subjobs")
		}
		resp, err := call(c.Context, sys, api.Request{Op: api.OpOrder, IDs: ids})
		return jobsResult(sys, "qorder", resp, err, nil)
	}
	return run(ctx, app, sys, args)
}
