package cli

import (
	"context"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// Qdel deletes jobs: queued ones leave the queue, running ones are stopped
// (SIGTERM, the grace period, SIGKILL).
func Qdel(ctx context.Context, args []string, sys *Sys) int {
	return idsCommand(ctx, args, sys, "qdel", api.OpDelete, "delete jobs",
		`Deletes jobs. A queued job leaves the queue; a running one gets SIGTERM, then
SIGKILL after its grace period. Only the owner (or an admin) may delete a job.
Prints nothing on success. An array is deleted whole with ID[], subjobs with
ID[7] or a range ID[2-5] (ID[1-9:2] and ID[1,4,7-8] work too). The .cluster
suffix of an id may be left out. A job that is already stopping (preempted,
or deleted before) is stopped again within its partition's preempt_grace,
which shortens a long -W grace. An admin's qdel -W force kills the job at once
(SIGKILL, no grace).

Examples:
   qdel 123
   qdel 123.lab 124.lab
   qdel '125[]'          # the whole array
   qdel '125[10-19]'     # ten of its subjobs
   qdel -W force 126     # admins: no grace`)
}

// Qhold holds jobs: a held job is not started until qrls releases it.
func Qhold(ctx context.Context, args []string, sys *Sys) int {
	return idsCommand(ctx, args, sys, "qhold", api.OpHold, "hold jobs",
		`Puts a hold on queued jobs: they are not started until qrls releases them.
A user's hold can be released by that user; an admin's hold by an admin.

Examples:
   qhold 123
   qhold '125[]'`)
}

// Qrls releases held jobs.
func Qrls(ctx context.Context, args []string, sys *Sys) int {
	return idsCommand(ctx, args, sys, "qrls", api.OpRelease, "release held jobs",
		`Releases the hold on jobs (qsub -h or qhold), so that they can start.

Examples:
   qrls 123
   jid=$(qsub -h prep.sh); qsub -W depend=afterok:$jid train.sh; qrls $jid`)
}

// idsCommand is a command that sends one request for a list of job ids and
// reports each failure in PBS's words.
func idsCommand(ctx context.Context, args []string, sys *Sys, name string, op api.Op, usage, description string) int {
	app := newApp(sys, name, usage, name+" ID...", description)
	var force bool
	if op == api.OpDelete {
		app.Flags = append(app.Flags, &ucli.GenericFlag{Name: "W", Usage: "`force`: (admins) kill at once, without grace",
			Value: funcValue(func(s string) error {
				if s != "force" {
					return fmt.Errorf("-W %q: qdel knows only -W force", s)
				}
				force = true
				return nil
			})})
	}
	app.Action = func(c *ucli.Context) error {
		if c.NArg() == 0 {
			return usagef("no job id given")
		}
		ids, err := expandJobIDs(c.Args().Slice())
		if err != nil {
			return usageError{err}
		}
		resp, err := call(c.Context, sys, api.Request{Op: op, IDs: ids, Force: force})
		return jobsResult(sys, name, resp, err, ids)
	}
	return run(ctx, app, sys, args)
}
