package cli

import (
	"context"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// Qexec opens a session in one's own running job: a shell (or a command)
// inside the job's container on one of its nodes, as the job's user, with
// its GPUs, limits and confinement (Slurm's srun --jobid --overlap --pty).
func Qexec(ctx context.Context, args []string, sys *Sys) int {
	app := newApp(sys, "qexec", "open a shell in a running job",
		"qexec [-n NODE] ID [-- command [args...]]",
		`Runs a shell (your login shell where the job's image has it, else /bin/sh), or the
command after --, inside the running job ID's container on its first node, or on
NODE (-n), one of the job's nodes: as the job's user, with the job's GPUs
($CUDA_VISIBLE_DEVICES), environment, cgroup limits and confinement, for
nvidia-smi, py-spy or top beside the job. With a terminal on stdin the session
gets one (raw mode, the window's size); otherwise plain pipes. qexec exits with
the command's status; the job goes on when it ends. Only the job's owner (and
admins) may; the session ends when the job does.

Examples:
   qexec 123
   qexec -n gpu02 123 -- nvidia-smi
   echo 'ps -ef' | qexec 123`)
	var node string
	app.Flags = append(app.Flags, &ucli.StringFlag{Name: "n", Usage: "the job's `NODE` to open the session on (default: its first)", Destination: &node})
	app.Action = func(c *ucli.Context) error {
		a := c.Args().Slice()
		if len(a) == 0 {
			return usagef("no job id given")
		}
		ids, err := expandJobIDs(a[:1])
		if err != nil {
			return usageError{err}
		}
		cmd := a[1:]
		if len(cmd) > 0 && cmd[0] == "--" {
			cmd = cmd[1:]
		}
		return openSession(c.Context, sys, "qexec", api.SessionSpec{Job: ids[0], Node: node, Command: cmd})
	}
	return report(sys, "qexec", app.RunContext(ctx, args))
}
