// Command sharqctld is sharq's controller: its command line is
// ctld.NewApp, the controller ctld.Serve.
package main

import (
	"fmt"
	"os"

	"github.com/sharq-hpc/sharq/daemon/ctld"
)

func main() {
	if err := ctld.NewApp(os.Stderr).Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "sharqctld:", err)
		os.Exit(1)
	}
}
