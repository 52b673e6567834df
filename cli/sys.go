package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/api"
)

// Caller sends one request to the controller and returns its response. When
// the controller refused the request it returns the response too, with an
// error that is (or wraps) its *api.Error; client.Call is the real one.
type Caller func(ctx context.Context, req api.Request) (*api.Response, error)

// ImageImporter loads an image archive into the containerd at socket, in
// namespace, and returns the names of the images it holds
// (runtime/containerd.ImportImage).
type ImageImporter func(ctx context.Context, socket, namespace string, r io.Reader) ([]string, error)

// Sys is what a command needs from its process: streams, environment, the
// clock, and the controller round-trip. OS fills it from the real process.
type Sys struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Environ is the environment as KEY=VALUE lines (os.Environ).
	Environ []string
	// Dir is the working directory: PBS_O_WORKDIR, and what relative paths
	// are relative to. Empty when it could not be determined.
	Dir string
	// Host is this host's name (PBS_O_HOST).
	Host string
	// Now is the clock (qsub -a, elapsed times); Location the time zone in
	// which times are read and shown.
	Now      func() time.Time
	Location *time.Location
	// Terminal says Stdout is a terminal: tables fit their contents instead
	// of PBS's fixed widths. Color adds ANSI colours (a terminal without
	// NO_COLOR and TERM=dumb).
	Terminal bool
	Color    bool
	Call     Caller
	// ImportImage is what sharqctl image import uses; nil makes that
	// subcommand fail with a clear error.
	ImportImage ImageImporter
	// PlotUsage draws sharqctl report usage --plot (usageplot.Write); nil
	// makes --plot fail with a clear error.
	PlotUsage UsagePlotter
	// DialSession connects to a node's session port (qsub -I, qexec);
	// nil makes those fail with a clear error.
	DialSession SessionDialer
	// Term is the terminal on stdin (nil when stdin is not one): sessions
	// put it in raw mode and follow its size.
	Term *os.File
	// RetryDelay is the first pause before qsub -W block=true reconnects
	// after losing the controller (doubling up to 30s); 0 means one second.
	RetryDelay time.Duration
	// Interrupts returns a context that ends, as ctx does, or when the
	// process gets SIGINT or SIGTERM (signal.NotifyContext), and its stop
	// function. qsub asks for it only before it waits (-I, -W
	// block=true): a plain submission installs no signal handler, which
	// costs a goroutine and a locked thread of its own, and is ended by
	// SIGINT as any short command is. nil: ctx as it is.
	Interrupts func(ctx context.Context) (context.Context, context.CancelFunc)
	// describe, when set, is given the command's App instead of running
	// its action (see App).
	describe func(*ucli.App)
}

// OS returns a Sys for this process, sending requests with call.
func OS(call Caller) *Sys {
	dir, _ := os.Getwd()
	// The real path: the node refuses a work directory reached through a
	// symbolic link (Getwd may answer $PWD, which can hold one).
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	host, _ := os.Hostname()
	term := isatty.IsTerminal(os.Stdout.Fd()) || isatty.IsCygwinTerminal(os.Stdout.Fd())
	var tty *os.File
	if isatty.IsTerminal(os.Stdin.Fd()) {
		tty = os.Stdin
	}
	return &Sys{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Environ:  os.Environ(),
		Dir:      dir,
		Host:     host,
		Now:      time.Now,
		Location: time.Local,
		Terminal: term,
		Color:    term && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
		Call:     call,
		Term:     tty,
		Interrupts: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		},
	}
}

// interrupts is s.Interrupts, or ctx unchanged when it is nil.
func (s *Sys) interrupts(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.Interrupts == nil {
		return context.WithCancel(ctx)
	}
	return s.Interrupts(ctx)
}

// getenv looks name up in s.Environ.
func (s *Sys) getenv(name string) (string, bool) {
	for i := len(s.Environ) - 1; i >= 0; i-- {
		kv := s.Environ[i]
		if len(kv) > len(name) && kv[len(name)] == '=' && kv[:len(name)] == name {
			return kv[len(name)+1:], true
		}
	}
	return "", false
}

func (s *Sys) now() time.Time {
	if s.Now == nil {
		return time.Now().In(s.loc())
	}
	return s.Now().In(s.loc())
}

func (s *Sys) loc() *time.Location {
	if s.Location == nil {
		return time.Local
	}
	return s.Location
}
