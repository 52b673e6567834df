package noded

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// The node's GPUs' health: sharqd watches them through NVML
// (gpu.WatchHealth: Xid and double-bit ECC events, and every
// gpuCheckInterval whether each GPU answers, its uncorrectable ECC count,
// its row remapper) and reports the faults it found in every hello and
// heartbeat (api.NodeMsg.GPUFaults), sending a heartbeat at once when it
// finds a new one, so that the controller fences the GPU before its next
// pass. The faults stay for as long as sharqd runs; the controller
// forgets the ones an admin cleared (daemon/ctld/gpuhealth.go).

// gpuCheckInterval is how often the GPUs are checked besides NVML's
// events.
const gpuCheckInterval = 30 * time.Second

// WatchGPUsFunc watches the node's GPUs, recording their faults in h, until
// ctx ends, as gpu.WatchHealth does; an error wrapping gpu.ErrNoNVML where
// NVIDIA's library is absent.
type WatchGPUsFunc func(ctx context.Context, h *gpu.Health, interval time.Duration, log *slog.Logger) error

// watchGPUs runs watch until ctx ends and sends a heartbeat at once for
// each new fault.
func (s *supervisor) watchGPUs(ctx context.Context, watch WatchGPUsFunc) {
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.gpuHealth.Changed():
				notify(s.health.changed)
			}
		}
	}()
	go func() {
		defer s.wg.Done()
		err := watch(ctx, s.gpuHealth, gpuCheckInterval, s.log)
		switch {
		case errors.Is(err, gpu.ErrNoNVML):
			s.log.Info("no NVML: the GPUs' health is not watched")
		case err != nil:
			s.log.Error("cannot watch the GPUs' health", "err", err)
		}
	}()
}

// startNodeChecks runs the node health program once (under ctx, before
// the first hello) and starts, under sctx, its periodic runs, the
// sampling of the jobs' GPU use and the watch of the GPUs' health (NVML's
// where the inventory came from it (source), else only what o injects).
func (s *supervisor) startNodeChecks(ctx, sctx context.Context, o Options, source string) {
	if rc := o.Config.Runtime; rc.HealthCheck != "" {
		interval := rc.HealthCheckInterval
		if interval <= 0 {
			interval = conf.DefaultHealthCheckInterval
		}
		s.healthCheckOnce(ctx, rc.HealthCheck, min(healthCheckTimeout, interval))
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.watchHealthCheck(sctx, rc.HealthCheck, interval)
		}()
	}
	if o.OpenSampler != nil || source == gpu.SourceNVML {
		interval := o.Config.Runtime.GPUSampleInterval
		if interval <= 0 {
			interval = conf.DefaultGPUSampleInterval
		}
		s.startSampling(sctx, o.OpenSampler, interval)
	}
	if watch := o.WatchGPUs; watch != nil {
		s.watchGPUs(sctx, watch)
	} else if source == gpu.SourceNVML {
		s.watchGPUs(sctx, gpu.WatchHealth)
	}
}
