// Command sharq-gpus prints the GPUs sharqd would report for this machine,
// as JSON: NVML's where NVIDIA's library works, else the device nodes given
// as arguments (the configuration's declared GPUs).
//
//	sharq-gpus [/dev/nvidia0 ...]
//
// It exits 1 when NVML was not used and -nvml is given.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sharq-hpc/sharq/runtime/gpu"
)

func main() {
	requireNVML := flag.Bool("nvml", false, "fail unless NVML found the GPUs")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: %s [-nvml] [declared device ...]\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	report := gpu.Detect(ctx, flag.Args())
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(report); err != nil {
		fmt.Fprintln(os.Stderr, "sharq-gpus:", err)
		os.Exit(1)
	}
	if *requireNVML && report.Source != gpu.SourceNVML {
		fmt.Fprintln(os.Stderr, "sharq-gpus: NVML did not report the GPUs")
		os.Exit(1)
	}
}
