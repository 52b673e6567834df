package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// Command is a client command's entry point, what its main under cmd/
// calls: it runs the command line args and returns the exit status.
type Command func(ctx context.Context, args []string, sys *Sys) int

// Commands are the client commands by name. The man pages
// (internal/tools/mangen) are made from each one's App, so a command is
// listed here as well as under cmd/ (mangen's tests check both ways).
var Commands = map[string]Command{
	"qsub":     Qsub,
	"qstat":    Qstat,
	"qdel":     Qdel,
	"qhold":    Qhold,
	"qrls":     Qrls,
	"qalter":   Qalter,
	"qexec":    Qexec,
	"qselect":  Qselect,
	"pbsnodes": Pbsnodes,
	"qsig":     Qsig,
	"qrerun":   Qrerun,
	"qmove":    Qmove,
	"qorder":   Qorder,
	"tracejob": Tracejob,
	"sharqctl": Sharqctl,
}

// CommandNames are the names in Commands, sorted.
func CommandNames() []string {
	names := make([]string, 0, len(Commands))
	for n := range Commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// errDescribed stops a command that App runs before its action.
var errDescribed = errors.New("described")

// App returns the urfave App of the client command name, set up as it is
// when it runs: its usage, description, flags, subcommands and help
// template, what --help prints. It runs the command with no arguments on a
// Sys that reaches nothing and stops it before its action.
func App(name string) (*ucli.App, error) {
	cmd, ok := Commands[name]
	if !ok {
		return nil, fmt.Errorf("cli: no command %q", name)
	}
	var app *ucli.App
	sys := &Sys{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		describe: func(a *ucli.App) { app = a },
	}
	cmd(context.Background(), []string{name}, sys)
	if app == nil {
		return nil, fmt.Errorf("cli: %s ran without giving its App (an app made without newApp, or with its own Before)", name)
	}
	return app, nil
}
