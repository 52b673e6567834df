// Command sharq-sim replays job traces through sharq's scheduling core; see
// sim.Main.
package main

import (
	"os"

	"github.com/sharq-hpc/sharq/sim"
)

func main() { os.Exit(sim.Main(os.Args)) }
