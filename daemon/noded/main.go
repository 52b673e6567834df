package noded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime"
)

// NewRuntime makes the node's container runtime for Main. cmd/sharqd gives
// containerd's (runtime/containerd), so this package links no container
// runtime implementation: its tests and tools do not pull containerd's
// client in.
type NewRuntime func(ctx context.Context, cfg *conf.Config, node string, log *slog.Logger) (runtime.Runtime, error)

// Main is sharqd's command line: it wires the configuration, the runtime
// newRuntime makes, logging and signals to Run.
//
//	sharqd --config /etc/sharq/cluster.toml [--node NAME] [--state-dir DIR] [--log-level LEVEL] [--fake-gpu-state FILE]
func Main(args []string, newRuntime NewRuntime) int {
	if err := NewApp(newRuntime).Run(args); err != nil {
		fmt.Fprintln(os.Stderr, "sharqd:", err)
		return 1
	}
	return 0
}

// NewApp is sharqd's command line (also the source of its man page:
// internal/tools/mangen, which gives a nil newRuntime: it only prints).
func NewApp(newRuntime NewRuntime) *cli.App {
	return &cli.App{
		Name:  "sharqd",
		Usage: "sharq node daemon: runs the controller's jobs as containers with pinned GPUs",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Aliases: []string{"c"}, Usage: "cluster configuration `FILE` (TOML)", Value: "/etc/sharq/cluster.toml", EnvVars: []string{"SHARQ_CONF"}},
			&cli.StringFlag{Name: "node", Aliases: []string{"n"}, Usage: "this node's `NAME` in the configuration (default: the host name)"},
			&cli.StringFlag{Name: "state-dir", Usage: "`DIR` for the node's job records (default: /var/lib/sharq/node/NAME)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "`LEVEL`: debug, info, warn or error"},
			&cli.StringFlag{Name: "fake-gpu-state", Usage: "tests and benchmarks only, never production: read the GPUs' use and faults from this JSON `FILE` instead of NVML (README: fake GPUs)"},
		},
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			if newRuntime == nil {
				return errors.New("sharqd: no container runtime")
			}
			return mainAction(c, newRuntime)
		},
	}
}

func mainAction(c *cli.Context, newRuntime NewRuntime) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := conf.Load(c.String("config"))
	if err != nil {
		return err
	}
	node, err := nodeName(cfg, c.String("node"))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rt, err := newRuntime(ctx, cfg, node, log)
	if err != nil {
		return err
	}
	defer rt.Close()
	o := Options{
		Config: cfg, Node: node, Runtime: rt, StateDir: c.String("state-dir"), Logger: log,
	}
	if path := c.String("fake-gpu-state"); path != "" {
		log.Warn("fake GPU source: the GPUs' use and faults come from a test file, not NVML", "file", path)
		fakeGPUOptions(&o, path)
	}
	return Run(ctx, o)
}

// nodeName is --node, or the host name as the configuration knows it (full
// or up to its first dot).
func nodeName(cfg *conf.Config, flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("node name: %w (use --node)", err)
	}
	short, _, _ := strings.Cut(host, ".")
	for _, n := range []string{host, short} {
		if cfg.Node(n) != nil {
			return n, nil
		}
	}
	return "", fmt.Errorf("%w: host name %q in %s (use --node)", ErrUnknownNode, host, cfg.File)
}
