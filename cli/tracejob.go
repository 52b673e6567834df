package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// tracejobTime is the form of tracejob's timestamps: 03/01/2026 12:00:00.
const tracejobTime = "01/02/2006 15:04:05"

// Tracejob prints a job's history in tracejob's form (tracejob [-n DAYS]
// [-z] ID).
func Tracejob(ctx context.Context, args []string, sys *Sys) int {
	var (
		days  int
		dedup bool
	)
	app := newApp(sys, "tracejob", "print a job's history",
		"tracejob [-n DAYS] [-z] ID",
		`Prints what happened to a job, oldest first, as PBS's tracejob prints the entries
of its logs: a line per event with its time (MM/DD/YYYY HH:MM:SS, local time), the
source letter and the message. sharq has no logs to search: the controller keeps each
job's history with the job (qstat -f -x shows it as history.N), so the job is found
while it runs and after it has finished (as qstat -x finds it). Every entry is the
server's (S): sharqctld records what the nodes report (starts, exits) too. A job's
history keeps its first entry and its latest 199.

Without -n every entry is shown; -n DAYS shows those of the last DAYS days. A job that
cannot be found exits 153 ("Couldn't find Job Id ...").

Examples:
   tracejob 123
   tracejob -n 2 '125[7]'`)
	app.Flags = []ucli.Flag{
		&ucli.IntFlag{Name: "n", Usage: "only entries of the last `DAYS` days", Destination: &days},
		&ucli.BoolFlag{Name: "z", Usage: "leave out an entry that repeats the one before", Destination: &dedup, DisableDefaultText: true},
	}
	app.Action = func(c *ucli.Context) error {
		if c.NArg() != 1 {
			return usagef("give one job id")
		}
		if days < 0 {
			return usagef("-n %d: days must not be negative", days)
		}
		ids, err := expandJobIDs(c.Args().Slice())
		if err != nil {
			return usageError{err}
		}
		if len(ids) != 1 {
			return usagef("give one job, not a range of subjobs")
		}
		resp, err := call(c.Context, sys, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: ids, Finished: true, Subjobs: true, Full: true}})
		if err != nil || len(resp.Jobs) == 0 {
			var ae *api.Error
			if err != nil && (!errors.As(err, &ae) || ae.Code != api.CodeUnknownJob) {
				return err
			}
			fmt.Fprintf(sys.Stderr, "tracejob: Couldn't find Job Id %s\n", printable(ids[0]))
			return exitStatus(ExitUnknownJob)
		}
		j := resp.Jobs[0]
		var since time.Time
		if days > 0 {
			since = sys.now().Add(-time.Duration(days) * 24 * time.Hour)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "\nJob: %s\n\n", printable(j.ID))
		last := ""
		for _, h := range j.History {
			if h.Time.Before(since) || dedup && h.What == last {
				continue
			}
			last = h.What
			fmt.Fprintf(&b, "%-20s %-5c%s\n", h.Time.In(sys.loc()).Format(tracejobTime), 'S', printable(h.What))
		}
		_, err = fmt.Fprint(sys.Stdout, b.String())
		return err
	}
	return run(ctx, app, sys, args)
}
