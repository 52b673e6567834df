package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

func init() {
	// PBS commands use -h for other things (qsub -h holds the job), so help
	// is --help only, in every command.
	ucli.HelpFlag = &ucli.BoolFlag{Name: "help", Usage: "show this help", DisableDefaultText: true}
}

// Exit statuses. Job errors use PBS's: its error number modulo 256, which
// scripts test (qstat ID; [ $? = 153 ] means the job is gone).
const (
	ExitOK         = 0
	ExitFailure    = 1
	ExitUsage      = 2
	ExitUnknownJob = 153 // PBSE_UNKJOBID 15001
	// ExitFinishedJob: qstat of a finished job without -x (PBSE_HISTJOBID 15139).
	ExitFinishedJob = 35
	// ExitUnknownQueue: a share (PBS queue) that does not exist (PBSE_UNKQUE 15018).
	ExitUnknownQueue = 170
	ExitPermission   = 159 // PBSE_PERM 15007
	ExitBadState     = 168 // PBSE_BADSTATE 15016
	// ExitResourceLimit: a job no node or share could ever run (PBSE_EXCQRESC 15036).
	ExitResourceLimit = 188
)

// requestTimeout bounds one ordinary request (not qsub -W block=true's wait).
const requestTimeout = 2 * time.Minute

// usageError is a bad command line: exit status 2 and a hint to --help.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitStatus ends a command with a status and no further message (the
// command printed what it had to say).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// connectHelp ends every command's --help: how it finds the controller.
const connectHelp = `
CONTROLLER:
   The command reaches sharqctld over the first of:
     SHARQ_SERVER=host:port[,host:port...]  TCP, with a MUNGE credential from the local munged
     SHARQ_SOCKET=path                      that Unix socket (the kernel says who you are)
     $SHARQ_CONF or /etc/sharq/cluster.toml its socket when it exists on this host (the controller
                                            host), else its servers (client_listen) over TCP
   Over TCP the servers are tried in order: a follower's "not leader" answer sends the request
   to the leader it names; a server that refuses, does not answer within a third of
   SHARQ_SERVER_TIMEOUT, or drops the connection, is left for the next, and the servers are
   tried again (with backoff) until SHARQ_SERVER_TIMEOUT (default 30s, at most 5m) has passed:
   a failover is a pause, not an error. A submission sent again is made once (request id).
   SHARQ_MUNGE_SOCKET overrides munge_socket. When it cannot connect, the error names the
   transport and address it used ("unix socket PATH" or "TCP HOST:PORT") and what chose it.
`

// newApp returns an urfave App that writes to sys's streams and never exits
// the process itself.
func newApp(sys *Sys, name, usage, usageText, description string) *ucli.App {
	return &ucli.App{
		Name:            name,
		HelpName:        name,
		Usage:           usage,
		UsageText:       usageText,
		Description:     description,
		Writer:          sys.Stdout,
		ErrWriter:       sys.Stderr,
		HideHelpCommand: true,
		HideVersion:     true,
		// A command's options are its only options.
		CustomAppHelpTemplate: strings.Replace(ucli.AppHelpTemplate, "GLOBAL OPTIONS", "OPTIONS", 2) + connectHelp,
		ExitErrHandler:        func(*ucli.Context, error) {},
		OnUsageError: func(_ *ucli.Context, err error, _ bool) error {
			return usageError{err}
		},
		// App (the man pages) takes the app here, whole, before its action.
		Before: func(c *ucli.Context) error {
			if sys.describe != nil {
				sys.describe(c.App)
				return errDescribed
			}
			return nil
		},
	}
}

// run runs app and turns its outcome into an exit status, printing errors
// as "name: message" on stderr.
func run(ctx context.Context, app *ucli.App, sys *Sys, args []string) int {
	if len(args) == 0 {
		args = []string{app.Name}
	}
	valueOpts, boolOpts := flagKinds(app.Flags)
	args = append([]string{args[0]}, getoptWords(args[1:], valueOpts, boolOpts)...)
	err := app.RunContext(ctx, args)
	return report(sys, app.Name, err)
}

func report(sys *Sys, name string, err error) int {
	if err == nil {
		return ExitOK
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	var ue usageError
	if errors.As(err, &ue) {
		if errors.Is(err, flag.ErrHelp) {
			// -h or -help where they mean nothing: show the help.
			fmt.Fprintf(sys.Stderr, "%s: use --help for help\n", name)
			return ExitUsage
		}
		fmt.Fprintf(sys.Stderr, "%s: %v\nTry '%s --help' for more information.\n", name, err, name)
		return ExitUsage
	}
	fmt.Fprintf(sys.Stderr, "%s: %v\n", name, err)
	var ae *api.Error
	if errors.As(err, &ae) {
		return codeStatus(ae.Code)
	}
	return ExitFailure
}

// codeStatus maps an api error code to an exit status.
func codeStatus(code string) int {
	switch code {
	case api.CodeUnknownJob:
		return ExitUnknownJob
	case api.CodePermission:
		return ExitPermission
	case api.CodeInvalidState:
		return ExitBadState
	case api.CodeResourceLimit:
		return ExitResourceLimit
	}
	return ExitFailure
}

// call sends one ordinary request with requestTimeout.
func call(ctx context.Context, sys *Sys, req api.Request) (*api.Response, error) {
	if sys.Call == nil {
		return nil, errors.New("no connection to sharqctld configured")
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req.V = api.Version
	return sys.Call(ctx, req)
}

// pbsJobError words a per-job failure as PBS commands do.
func pbsJobError(e api.Error, id string) string {
	if e.ID != "" {
		id = e.ID
	}
	// PBS's stock phrases first (scripts match them), then the
	// controller's explanation when it says more.
	stock := ""
	switch e.Code {
	case api.CodeUnknownJob:
		stock = "Unknown Job Id " + id
	case api.CodePermission:
		stock = "Unauthorized Request  " + id
	case api.CodeInvalidState:
		stock = "Request invalid for state of job " + id
	}
	if stock != "" {
		if e.Code == api.CodeUnknownJob || e.Message == "" || strings.HasPrefix(e.Message, strings.Fields(stock)[0]) {
			return stock
		}
		return stock + " (" + e.Message + ")"
	}
	if id != "" && !strings.Contains(e.Message, id) {
		return e.Message + " " + id
	}
	return e.Message
}
