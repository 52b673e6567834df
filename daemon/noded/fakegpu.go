package noded

import (
	"context"
	"log/slog"
	"time"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// fakeGPUOptions makes sharqd take its GPUs' use and health from a fake
// state file (gpu.FakeSource, sharqd's --fake-gpu-state: tests and
// benchmarks only) instead of NVML. The file is read at every sample
// (gpu_sample_interval) and checked for faults as often, or every
// gpuCheckInterval where that is shorter, so that a test with a short
// sample interval sees an injected fault at once.
func fakeGPUOptions(o *Options, path string) {
	src := &gpu.FakeSource{Path: path}
	every := o.Config.Runtime.GPUSampleInterval
	if every <= 0 {
		every = conf.DefaultGPUSampleInterval
	}
	o.OpenSampler = func() (GPUSampler, error) { return src, nil }
	o.WatchGPUs = func(ctx context.Context, h *gpu.Health, interval time.Duration, log *slog.Logger) error {
		return src.WatchHealth(ctx, h, min(interval, every), log)
	}
}
