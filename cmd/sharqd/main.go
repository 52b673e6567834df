// Command sharqd is sharq's node daemon: it connects to the controller and
// runs the jobs it is given as containerd containers; see noded.Main.
package main

import (
	"os"

	"github.com/sharq-hpc/sharq/daemon/noded"
)

func main() { os.Exit(noded.Main(os.Args)) }
