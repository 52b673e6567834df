// Command sharq-up runs a whole sharq cluster on this machine in the
// foreground (make up): a private containerd, the demo image, fake GPUs,
// sharqctld and sharqd. Ctrl-C stops it and removes its containers. See
// internal/localcluster.
//
//	sharq-up [--config contrib/examples/local.toml] [--bin bin] [--user sharqdemo]
//	         [--run-dir /run/sharq-local] [--state-dir /var/lib/sharq-local]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sharq-hpc/sharq/internal/localcluster"
)

func main() {
	var o localcluster.Options
	flag.StringVar(&o.Repo, "repo", ".", "the sharq repository `DIR`")
	flag.StringVar(&o.Config, "config", "", "cluster configuration `FILE` (default REPO/contrib/examples/local.toml)")
	flag.StringVar(&o.BinDir, "bin", "", "`DIR` holding sharqctld, sharqd and the client commands (default REPO/bin)")
	flag.StringVar(&o.User, "user", localcluster.DefaultUser, "ordinary `USER` to submit jobs as, created if missing (\"-\": none)")
	flag.StringVar(&o.RunDir, "run-dir", localcluster.DefaultRunDir, "`DIR` of the sockets, secret, fake GPUs and lock file (the configuration's paths must be under it or --state-dir)")
	flag.StringVar(&o.StateDir, "state-dir", localcluster.DefaultStateDir, "`DIR` of the logs, spool and containerd's root")
	flag.DurationVar(&o.Timeout, "timeout", localcluster.DefaultTimeout, "how long each start-up step may take")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: sharq-up [options]\n\n"+
			"Runs a local sharq cluster in the foreground (what make up runs, as root).\n"+
			"Ctrl-C stops it and removes its containers, mounts and state; logs stay in STATE-DIR/log.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		<-sigs
		cancel()
		for range sigs {
			fmt.Fprintln(os.Stderr, "sharq-up: already stopping, please wait (removing the containers takes a few seconds)")
		}
	}()
	err := localcluster.Up(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sharq-up:", err)
		if errors.Is(err, localcluster.ErrAlreadyRunning) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}
