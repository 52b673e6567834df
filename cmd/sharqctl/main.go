// Command sharqctl administers sharq; see package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/cli/usageplot"
	"github.com/sharq-hpc/sharq/client"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	sys := cli.OS(client.Auto())
	sys.ImportImage = containerd.ImportImage
	sys.PlotUsage = usageplot.Write
	code := cli.Sharqctl(ctx, os.Args, sys)
	stop()
	os.Exit(code)
}
