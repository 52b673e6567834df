// Command qsub is PBS's qsub for sharq; see package cli.
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
	sys := cli.OS(client.Auto())
	sys.DialSession = client.AutoSession()
	code := cli.Qsub(ctx, os.Args, sys)
	stop()
	os.Exit(code)
}
