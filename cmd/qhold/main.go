// Command qhold is PBS's qhold for sharq; see package cli.
package main

import (
	"context"
	"os"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/client"
	_ "github.com/sharq-hpc/sharq/internal/shortlived" // one P, stack sized once
)

// main installs no signal handler (as qsub's): SIGINT ends a qhold as it
// ends any short command, and the process starts no signal goroutine and
// thread.
func main() {
	os.Exit(cli.Qhold(context.Background(), os.Args, cli.OS(client.Auto())))
}
