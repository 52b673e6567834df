// Command qstat is PBS's qstat for sharq; see package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"sharq/cli"
	"sharq/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Qstat(ctx, os.Args, cli.OS(client.Auto()))
	stop()
	os.Exit(code)
}
