package gpu

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"
)

// Main is sharq-gpus: it prints, as JSON on stdout, the GPUs sharqd would
// report for this machine (Detect) and returns its exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if err := NewApp(stdout, stderr).Run(args); err != nil {
		fmt.Fprintln(stderr, "sharq-gpus:", err)
		return 1
	}
	return 0
}

// NewApp is sharq-gpus's command line (also the source of its man page:
// internal/tools/mangen).
func NewApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:      "sharq-gpus",
		Usage:     "print the GPUs sharqd would report for this machine",
		UsageText: "sharq-gpus [--nvml] [DEVICE...]",
		Description: `Prints, as JSON, the GPUs sharqd would report for this machine: NVML's where
NVIDIA's library works, with the driver version and how they disagree with the
device nodes given as arguments, else those device nodes (the configuration's
gpu_devices), with why NVML was not used when it failed ("source" says which).
Exits 1 when --nvml is given and NVML did not report the GPUs.

Examples:
   sharq-gpus
   sharq-gpus --nvml /dev/nvidia0 /dev/nvidia1`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "nvml", Usage: "fail unless NVML found the GPUs"},
		},
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			ctx, cancel := context.WithTimeout(c.Context, time.Minute)
			defer cancel()
			report := Detect(ctx, c.Args().Slice())
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(report); err != nil {
				return err
			}
			if c.Bool("nvml") && report.Source != SourceNVML {
				return errors.New("NVML did not report the GPUs")
			}
			return nil
		},
	}
}
