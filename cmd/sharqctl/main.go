// Command sharqctl administers sharq; see package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"sharq/cli"
	"sharq/client"
	"sharq/runtime"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	sys := cli.OS(client.Auto())
	sys.ImportImage = runtime.ImportImage
	code := cli.Sharqctl(ctx, os.Args, sys)
	stop()
	os.Exit(code)
}
