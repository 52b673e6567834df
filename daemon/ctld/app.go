package ctld

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

// NewApp is sharqctld's command line (cmd/sharqctld runs it): it wires
// the configuration, logging and signals (SIGHUP reloads, SIGINT/SIGTERM
// stop) to a Controller (Serve), logging and writing its help to stderr.
// It is also the source of the man page (internal/tools/mangen).
func NewApp(stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "sharqctld",
		Usage: "the sharq controller: queues, quota shares, scheduling",
		UsageText: "sharqctld --config /etc/sharq/cluster.toml\n" +
			"   kill -HUP $(pidof sharqctld)   # reload the configuration",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: "/etc/sharq/cluster.toml", EnvVars: []string{"SHARQ_CONF"},
				Usage: "cluster configuration `FILE` (TOML)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.BoolFlag{Name: "log-json", Usage: "log as JSON lines instead of text"},
		},
		Writer:    stderr,
		ErrWriter: stderr,
		Action: func(cx *cli.Context) error {
			log, err := newLogger(stderr, cx.String("log-level"), cx.Bool("log-json"))
			if err != nil {
				return err
			}
			return Serve(cx.Context, cx.String("config"), log)
		},
	}
}

func newLogger(w io.Writer, level string, json bool) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: l}
	if json {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// Serve runs a Controller of the configuration at path until ctx ends or
// SIGINT or SIGTERM comes, reloading the configuration on SIGHUP.
func Serve(ctx context.Context, path string, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := New(ctx, Options{ConfigPath: path, Logger: log})
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-hup:
				_ = c.Reload(ctx, path) // logged; the old configuration stays on error
			case <-ctx.Done():
				return
			}
		}
	}()
	return c.Run(ctx)
}
