// Command qalter is PBS's qalter for sharq; see package cli.
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
	code := cli.Qalter(ctx, os.Args, cli.OS(client.Auto()))
	stop()
	os.Exit(code)
}
