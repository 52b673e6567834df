// Command sharqctld is sharq's controller.
package main

import (
	"os"

	"github.com/sharq-hpc/sharq/daemon/ctld"
)

func main() { os.Exit(ctld.Main(os.Args, os.Stderr)) }
