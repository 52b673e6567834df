package cli

import (
	"context"
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

var qalterWAttrs = map[string]bool{"depend": true}

// Qalter changes a queued job: priority, walltime, name, dependencies,
// start time.
func Qalter(ctx context.Context, args []string, sys *Sys) int {
	var spec api.AlterSpec
	app := newApp(sys, "qalter", "change queued jobs",
		"qalter [-p PRIORITY] [-l walltime=TIME] [-N NAME] [-W depend=LIST] [-a TIME] ID...",
		`Changes attributes of jobs that have not started: their priority, walltime,
name, dependencies (-W depend= with an empty list removes them all) or the time
before which they do not start.

Examples:
   qalter -p -100 123
   qalter -l walltime=24:00:00 123 124
   qalter -W depend=afterok:120 123
   qalter -a 0600 123`)
	app.Flags = []ucli.Flag{
		&ucli.GenericFlag{Name: "p", Usage: "new `PRIORITY`, PBS's -1024..1023: the job's place among its share's jobs (higher first); it never preempts", Value: funcValue(func(s string) error {
			p, err := parsePBSPriority(s)
			spec.PBSPriority = &p
			return err
		})},
		&ucli.GenericFlag{Name: "l", Usage: "new walltime: walltime=`TIME` (hh:mm:ss); other resources cannot change", Value: funcValue(func(s string) error {
			var r resSpec
			if err := parseResourceList(s, &r); err != nil {
				return err
			}
			if r.Walltime == nil || r.Nodes != nil || r.GPUs != nil || r.CPUs != nil || r.Mem != nil {
				return fmt.Errorf("%q: only walltime can be altered (-l walltime=12:00:00)", s)
			}
			spec.Walltime = r.Walltime
			return nil
		})},
		&ucli.GenericFlag{Name: "N", Usage: "new job `NAME`", Value: funcValue(func(s string) error {
			if err := validJobName(s); err != nil {
				return err
			}
			spec.Name = &s
			return nil
		})},
		&ucli.GenericFlag{Name: "W", Usage: "new dependencies: depend=`LIST` (afterok:ID[:ID...],...; empty to remove)", Value: funcValue(func(s string) error {
			attrs, err := splitWAttrs(s, qalterWAttrs)
			if err != nil {
				return err
			}
			for _, kv := range attrs {
				deps := []api.Dep{}
				if kv[1] != "" {
					if deps, err = ParseDepend(kv[1]); err != nil {
						return err
					}
				}
				spec.Deps = &deps
			}
			return nil
		})},
		&ucli.GenericFlag{Name: "a", Usage: "do not start before `TIME` [[[[CC]YY]MM]DD]hhmm[.SS]", Value: funcValue(func(s string) error {
			t, err := ParseDateTime(s, sys.now(), sys.loc())
			spec.NotBefore = &t
			return err
		})},
	}
	app.Action = func(c *ucli.Context) error {
		if c.NArg() == 0 {
			return usagef("no job id given")
		}
		if spec.PBSPriority == nil && spec.Walltime == nil && spec.Name == nil && spec.Deps == nil && spec.NotBefore == nil {
			return usagef("nothing to change: give -p, -l walltime=, -N, -W depend= or -a")
		}
		ids, err := expandJobIDs(c.Args().Slice())
		if err != nil {
			return usageError{err}
		}
		code := ExitOK
		for _, id := range ids {
			s := spec
			s.ID = id
			resp, err := call(c.Context, sys, api.Request{Op: api.OpAlter, Alter: &s})
			st, err := jobErrors(sys, "qalter", resp, err, []string{id})
			if err != nil {
				return err
			}
			if code == ExitOK {
				code = st
			}
		}
		if code != ExitOK {
			return exitStatus(code)
		}
		return nil
	}
	return run(ctx, app, sys, args)
}
