package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// DefaultContainerdSocket and DefaultImageNamespace are sharqctl image
// import's defaults.
const (
	DefaultContainerdSocket = "/run/containerd/containerd.sock"
	DefaultImageNamespace   = "sharq"
)

// Sharqctl is the admin command: reconfigure the controller, look at
// shares, nodes, configuration and jobs, drain nodes, change jobs, and
// import container images on a node.
func Sharqctl(ctx context.Context, args []string, sys *Sys) int {
	app := newApp(sys, "sharqctl", "administer sharq",
		"sharqctl COMMAND [options] [arguments...]",
		`Administers the sharq controller (sharqctld) through its socket ($SHARQ_SOCKET,
default /run/sharq/sharq.sock). Most commands need an admin.

Examples:
   sharqctl reconfigure
   sharqctl show shares
   sharqctl node drain gpu07
   sharqctl job priority 123 9000
   sharqctl report usage --by user --start 2026-03-01
   sharqctl image import pytorch.tar`)
	app.HideHelpCommand = false
	app.Commands = []*ucli.Command{
		{
			Name:      "reconfigure",
			Usage:     "reread the configuration file and apply it",
			UsageText: "sharqctl reconfigure",
			Description: `Makes sharqctld reread its TOML configuration and apply it: new shares, quotas,
nodes and partitions take effect; running jobs keep running. A configuration
with errors is refused and the old one stays.

Example:
   sharqctl reconfigure`,
			Action: func(c *ucli.Context) error {
				if err := noArgs(c); err != nil {
					return err
				}
				resp, err := call(c.Context, sys, api.Request{Op: api.OpReconfigure})
				if err != nil {
					return err
				}
				return printText(sys.Stdout, resp.Text)
			},
		},
		{
			Name:      "show",
			Usage:     "show shares, nodes, the topology, the configuration or a job",
			UsageText: "sharqctl show shares|nodes|topology|config|job ID",
			Description: `Example:
   sharqctl show nodes --json | jq '.[] | select(.state != "up") | .name'`,
			Subcommands: []*ucli.Command{
				{
					Name: "shares", Usage: "quota, use, borrowing and lending of each share", UsageText: "sharqctl show shares [--json]",
					Description: "Example:\n   sharqctl show shares",
					Flags:       []ucli.Flag{jsonFlag()},
					Action: func(c *ucli.Context) error {
						if err := noArgs(c); err != nil {
							return err
						}
						resp, err := call(c.Context, sys, api.Request{Op: api.OpShares})
						if err != nil {
							return err
						}
						if c.Bool("json") {
							return writeJSON(sys.Stdout, resp.Shares)
						}
						return writeShareTable(sys.Stdout, resp.Shares, sys)
					},
				},
				{
					Name: "nodes", Usage: "nodes, their state, GPUs and problems", UsageText: "sharqctl show nodes [--json]",
					Description: "Example:\n   sharqctl show nodes",
					Flags:       []ucli.Flag{jsonFlag()},
					Action: func(c *ucli.Context) error {
						if err := noArgs(c); err != nil {
							return err
						}
						resp, err := call(c.Context, sys, api.Request{Op: api.OpNodes})
						if err != nil {
							return err
						}
						if c.Bool("json") {
							return writeJSON(sys.Stdout, resp.Nodes)
						}
						return writeNodeTable(sys.Stdout, resp.Nodes, sys)
					},
				},
				{
					Name: "topology", Usage: "the topologies' domains (racks, switches, NVLink blocks) with their free and used GPUs", UsageText: "sharqctl show topology [--json]",
					Description: "Example:\n   sharqctl show topology",
					Flags:       []ucli.Flag{jsonFlag()},
					Action: func(c *ucli.Context) error {
						if err := noArgs(c); err != nil {
							return err
						}
						return showTopology(c.Context, sys, c.Bool("json"))
					},
				},
				{
					Name: "controllers", Usage: "the controllers: who leads, since when, its epoch", UsageText: "sharqctl show controllers [--json]",
					Description: "Example:\n   sharqctl show controllers",
					Flags:       []ucli.Flag{jsonFlag()},
					Action: func(c *ucli.Context) error {
						if err := noArgs(c); err != nil {
							return err
						}
						resp, err := call(c.Context, sys, api.Request{Op: api.OpControllers})
						if err != nil {
							return err
						}
						if c.Bool("json") {
							return writeJSON(sys.Stdout, resp.Controllers)
						}
						return writeControllerTable(sys.Stdout, resp.Controllers, sys)
					},
				},
				{
					Name: "config", Usage: "the configuration the controller runs with", UsageText: "sharqctl show config",
					Description: "Example:\n   sharqctl show config > sharq.toml.running",
					Action: func(c *ucli.Context) error {
						if err := noArgs(c); err != nil {
							return err
						}
						resp, err := call(c.Context, sys, api.Request{Op: api.OpConfig})
						if err != nil {
							return err
						}
						return printText(sys.Stdout, resp.Text)
					},
				},
				{
					Name: "job", Usage: "every attribute of a job, finished or not", UsageText: "sharqctl show job [--json] ID",
					Description: "Example:\n   sharqctl show job 123",
					Flags:       []ucli.Flag{jsonFlag()},
					Action: func(c *ucli.Context) error {
						pos, set, err := trailingFlags(c, []string{"json"}, nil)
						if err != nil {
							return err
						}
						if len(pos) != 1 {
							return usagef("want one job id")
						}
						id := pos[0]
						resp, err := call(c.Context, sys, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Finished: true, Full: true}})
						if code, err := jobErrors(sys, "sharqctl", resp, err, []string{id}); err != nil || code != ExitOK {
							if err == nil {
								err = exitStatus(code)
							}
							return err
						}
						if set["json"] != "" {
							return writeJSON(sys.Stdout, resp.Jobs)
						}
						return writeJobFull(sys.Stdout, resp.Jobs, sys)
					},
				},
			},
		},
		reportCommand(sys),
		{
			Name:      "node",
			Usage:     "drain or resume nodes",
			UsageText: "sharqctl node drain|resume NAME...",
			Subcommands: []*ucli.Command{
				{
					Name: "drain", Usage: "start no new jobs on nodes (running ones finish)", UsageText: "sharqctl node drain NAME...",
					Description: "Example:\n   sharqctl node drain gpu07 gpu08",
					Action:      func(c *ucli.Context) error { return nodeOp(c, sys, api.OpDrain) },
				},
				{
					Name: "resume", Usage: "let drained nodes run jobs again", UsageText: "sharqctl node resume NAME...",
					Description: "Example:\n   sharqctl node resume gpu07",
					Action:      func(c *ucli.Context) error { return nodeOp(c, sys, api.OpResume) },
				},
			},
		},
		{
			Name:      "job",
			Usage:     "change a job's priority, hold or release it",
			UsageText: "sharqctl job priority ID N | sharqctl job hold|release ID...",
			Subcommands: []*ucli.Command{
				{
					Name: "priority", Usage: "set a job's sharq priority (0 to 9999): it comes before PBS's -p in its share's order, and a higher one may preempt (in_share_preemption)", UsageText: "sharqctl job priority ID N",
					Description: "Example:\n   sharqctl job priority 123 9000",
					Action: func(c *ucli.Context) error {
						if c.NArg() != 2 {
							return usagef("want a job id and a priority")
						}
						p, err := parsePriority(c.Args().Get(1))
						if err != nil {
							return usageError{err}
						}
						id := c.Args().First()
						resp, err := call(c.Context, sys, api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: id, Priority: &p}})
						return jobsResult(sys, "sharqctl", resp, err, []string{id})
					},
				},
				{
					Name: "hold", Usage: "put an admin hold on jobs", UsageText: "sharqctl job hold ID...",
					Description: "Example:\n   sharqctl job hold 123",
					Action:      func(c *ucli.Context) error { return jobsOp(c, sys, api.OpHold) },
				},
				{
					Name: "release", Usage: "release held jobs", UsageText: "sharqctl job release ID...",
					Description: "Example:\n   sharqctl job release 123",
					Action:      func(c *ucli.Context) error { return jobsOp(c, sys, api.OpRelease) },
				},
			},
		},
		{
			Name:      "image",
			Usage:     "manage container images on this node",
			UsageText: "sharqctl image import FILE [--containerd SOCKET] [--namespace NS]",
			Subcommands: []*ucli.Command{
				{
					Name:      "import",
					Usage:     "import an image archive (docker save or OCI tar) into this node's containerd",
					UsageText: "sharqctl image import [--containerd SOCKET] [--namespace NS] FILE",
					Description: `Imports an image archive into containerd on this node, where sharqd runs jobs
from it. FILE - reads the archive from stdin. Run it on every node (or on a shared
containerd) and name the image in qsub --image or the partition's default.

Examples:
   sharqctl image import pytorch-24.05.tar
   docker save pytorch:24.05 | sharqctl image import -`,
					Flags: []ucli.Flag{
						&ucli.StringFlag{Name: "containerd", Usage: "containerd `SOCKET`", Value: DefaultContainerdSocket},
						&ucli.StringFlag{Name: "namespace", Usage: "containerd `NAMESPACE` sharqd uses", Value: DefaultImageNamespace},
					},
					Action: func(c *ucli.Context) error {
						pos, set, err := trailingFlags(c, nil, []string{"containerd", "namespace"})
						if err != nil {
							return err
						}
						if len(pos) != 1 {
							return usagef("want one image archive (or - for stdin)")
						}
						return importImage(c.Context, sys, pos[0], set["containerd"], set["namespace"])
					},
				},
			},
		},
	}
	setUsageErrors(app.Commands)
	return run(ctx, app, sys, args)
}

// setUsageErrors makes every subcommand's usage errors ours (exit 2, no
// help dumped on stdout).
func setUsageErrors(cmds []*ucli.Command) {
	for _, c := range cmds {
		c.OnUsageError = func(_ *ucli.Context, err error, _ bool) error { return usageError{err} }
		setUsageErrors(c.Subcommands)
	}
}

func jsonFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "json", Usage: "print the records as JSON", DisableDefaultText: true}
}

func noArgs(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("unexpected argument %q", c.Args().First())
	}
	return nil
}

func printText(w io.Writer, s string) error {
	if s == "" {
		return nil
	}
	if s[len(s)-1] != '\n' {
		s += "\n"
	}
	_, err := io.WriteString(w, s)
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	return enc.Encode(v)
}

func jobsOp(c *ucli.Context, sys *Sys, op api.Op) error {
	if c.NArg() == 0 {
		return usagef("no job id given")
	}
	ids, err := expandJobIDs(c.Args().Slice())
	if err != nil {
		return usageError{err}
	}
	resp, err := call(c.Context, sys, api.Request{Op: op, IDs: ids})
	return jobsResult(sys, "sharqctl", resp, err, ids)
}

func nodeOp(c *ucli.Context, sys *Sys, op api.Op) error {
	if c.NArg() == 0 {
		return usagef("no node name given")
	}
	failed := false
	for _, n := range c.Args().Slice() {
		if _, err := call(c.Context, sys, api.Request{Op: op, Node: n}); err != nil {
			var ae *api.Error
			if !errors.As(err, &ae) {
				return err
			}
			fmt.Fprintf(sys.Stderr, "sharqctl: %s %s: %v\n", op, n, err)
			failed = true
		}
	}
	if failed {
		return exitStatus(ExitFailure)
	}
	return nil
}

func importImage(ctx context.Context, sys *Sys, file, socket, namespace string) error {
	if sys.ImportImage == nil {
		return errors.New("image import is not available in this build")
	}
	var r io.Reader = sys.Stdin
	if file != "-" {
		f, err := os.Open(absPath(sys.Dir, file))
		if err != nil {
			return fmt.Errorf("image import: %w", err)
		}
		defer f.Close()
		r = f
	} else if r == nil {
		return errors.New("image import: no stdin to read the archive from")
	}
	names, err := sys.ImportImage(ctx, socket, namespace, r)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(sys.Stdout, n)
	}
	if len(names) == 0 {
		fmt.Fprintln(sys.Stderr, "sharqctl: the archive held no image")
	}
	return nil
}

// trailingFlags returns a subcommand's operands and its flags' values (bool
// flags as "true"), flags given after operands included: Go's flag parser
// stops at the first operand, but "sharqctl image import FILE --namespace x"
// is how people type it.
func trailingFlags(c *ucli.Context, bools, values []string) ([]string, map[string]string, error) {
	set := map[string]string{}
	for _, n := range bools {
		if c.Bool(n) {
			set[n] = "true"
		}
	}
	for _, n := range values {
		set[n] = c.String(n)
	}
	args := c.Args().Slice()
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case slices.Contains(bools, name) && !hasVal:
			set[name] = "true"
		case slices.Contains(values, name) && hasVal:
			set[name] = val
		case slices.Contains(values, name) && i+1 < len(args):
			i++
			set[name] = args[i]
		case slices.Contains(values, name):
			return nil, nil, usagef("flag needs an argument: %s", a)
		default:
			return nil, nil, usagef("flag provided but not defined: %s", a)
		}
	}
	return pos, set, nil
}
