package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// qselectStates are the state letters qselect -s takes: PBS's. sharq's
// jobs are never in T (transit), S (suspended), M (moved), X (finished
// subjob) or U (user suspended), so those select nothing.
const qselectStates = "BEFHMQRSTUWX"

// Qselect prints the ids of the jobs that pass its filters, one a line
// (qselect [-u USERS] [-s STATES] [-q DESTINATION] [-N NAME] [-x] [-J] [-t]
// [DESTINATION]), for scripts: qdel $(qselect -u alice -s Q).
func Qselect(ctx context.Context, args []string, sys *Sys) int {
	var (
		users, states, dest, name string
		finished, arrays, subjobs bool
	)
	app := newApp(sys, "qselect", "print the ids of the jobs that match",
		"qselect [-u USER[,USER...]] [-s STATES] [-q DESTINATION] [-N NAME] [-x] [-J] [-t] [DESTINATION]",
		`Prints the id of each job that passes every filter, one a line, as PBS's qselect:
without filters, every current job. A destination is SHARE, SHARE@SERVER or @SERVER
(sharq has one server). Finished jobs count only with -x (or -s F).

Examples:
   qdel $(qselect -u alice -s Q)     # alice's queued jobs
   qselect -q vision -s RH           # running and held jobs of share vision
   qselect -N train -x               # jobs named train, finished ones too`)
	app.Flags = []ucli.Flag{
		&ucli.StringFlag{Name: "u", Usage: "jobs of `USERS` (comma-separated, user or user@host)", Destination: &users},
		&ucli.StringFlag{Name: "s", Usage: "jobs in one of `STATES`, PBS's letters: Q H W R E B F", Destination: &states},
		&ucli.StringFlag{Name: "q", Usage: "jobs in `DESTINATION`: SHARE, SHARE@SERVER or @SERVER", Destination: &dest},
		&ucli.StringFlag{Name: "N", Usage: "jobs named `NAME`", Destination: &name},
		&ucli.BoolFlag{Name: "x", Usage: "finished jobs too", Destination: &finished, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "J", Usage: "array jobs only", Destination: &arrays, DisableDefaultText: true},
		&ucli.BoolFlag{Name: "t", Usage: "array subjobs too", Destination: &subjobs, DisableDefaultText: true},
	}
	app.Action = func(c *ucli.Context) error {
		if i := strings.IndexFunc(states, func(r rune) bool { return !strings.ContainsRune(qselectStates, r) }); i >= 0 {
			return usagef("-s %s: %q is not a state (PBS's letters: %s)", states, states[i], qselectStates)
		}
		operands := c.Args().Slice()
		if dest != "" {
			operands = append(operands, dest)
		}
		_, dests, err := splitOperands(operands)
		if err != nil {
			return usageError{err}
		}
		if len(dests) != len(operands) {
			return usagef("%q is not a destination (SHARE, SHARE@SERVER or @SERVER)", operands[0])
		}
		shares, err := destShares(c.Context, sys, "qselect", dests)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(dests, func(d destination) bool { return d.share == "" }) {
			shares = nil
		}
		var userSet []string
		for _, u := range strings.Split(users, ",") {
			if u, _, _ = strings.Cut(strings.TrimSpace(u), "@"); u != "" {
				userSet = append(userSet, u)
			}
		}
		f := &api.StatFilter{Summary: true, Subjobs: subjobs, Finished: finished || strings.Contains(states, "F")}
		if len(userSet) == 1 {
			f.User = userSet[0]
		}
		resp, err := call(c.Context, sys, api.Request{Op: api.OpStat, Stat: f})
		if err != nil {
			return err
		}
		rows, err := api.ParseSummaries(string(resp.Summary))
		if err != nil {
			return err
		}
		var b strings.Builder
		for _, r := range rows {
			switch {
			case len(userSet) > 0 && !slices.Contains(userSet, r.User),
				states != "" && (len(r.State) != 1 || !strings.Contains(states, string(r.State))),
				shares != nil && !shares[r.Share],
				name != "" && r.Name != name,
				r.ArrayParent != "" && !subjobs,
				arrays && r.ArrayParent == "" && !strings.Contains(r.ID, "[]"):
				continue
			}
			fmt.Fprintln(&b, printable(r.ID))
		}
		_, err = fmt.Fprint(sys.Stdout, b.String())
		return err
	}
	return run(ctx, app, sys, args)
}
