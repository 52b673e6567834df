// Command sharqctld is sharq's controller.
package main

import (
	"os"

	"sharq/daemon/ctld"
)

func main() { os.Exit(ctld.Main(os.Args, os.Stderr)) }
