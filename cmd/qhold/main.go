// Command qhold is PBS's qhold for sharq; see package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Qhold(ctx, os.Args, cli.OS(client.Auto()))
	stop()
	os.Exit(code)
}
