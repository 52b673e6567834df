// Command qsub is PBS's qsub for sharq; see package cli.
package main

import (
	"context"
	"os"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/client"
	_ "github.com/sharq-hpc/sharq/internal/shortlived" // one P, stack sized once
)

// main installs no signal handler: qsub watches SIGINT and SIGTERM only
// while it waits (-I, -W block=true; cli.Sys.Interrupts), so that a plain
// submission starts no signal goroutine and thread.
func main() {
	sys := cli.OS(client.Auto())
	sys.DialSession = client.AutoSession()
	os.Exit(cli.Qsub(context.Background(), os.Args, sys))
}
