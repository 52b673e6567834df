// Command sharq-gpus prints the GPUs sharqd would report for this machine,
// as JSON: NVML's where NVIDIA's library works, else the device nodes given
// as arguments (the configuration's declared GPUs); see gpu.Main.
//
//	sharq-gpus [--nvml] [declared device ...]
//
// It exits 1 when NVML was not used and --nvml is given.
package main

import (
	"os"

	"github.com/sharq-hpc/sharq/runtime/gpu"
)

func main() { os.Exit(gpu.Main(os.Args, os.Stdout, os.Stderr)) }
