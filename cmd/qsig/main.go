// Command qsig is PBS's qsig for sharq; see package cli.
package main

import (
	"context"
	"os"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/client"
	_ "github.com/sharq-hpc/sharq/internal/shortlived" // one P, stack sized once
)

// main installs no signal handler (as qsub's): SIGINT ends a qsig as it
// ends any short command.
func main() {
	os.Exit(cli.Qsig(context.Background(), os.Args, cli.OS(client.Auto())))
}
