package noded

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// Per-job GPU use: every `[runtime] gpu_sample_interval` sharqd reads the
// utilization, memory used and power of each running job's GPUs through
// NVML (device-level counters: a GPU belongs to one job) and keeps a
// summary per run (api.GPUUse: samples, mean and last utilization, memory
// now and at its peak, idle samples), which every heartbeat carries
// (api.NodeMsg.GPUUse). The summary of a run that ended is dropped; the
// controller has kept the last one it was sent.

// GPUSampler reads GPU counters (gpu.Sampler).
type GPUSampler interface {
	Sample(indices []int) ([]gpu.Sample, error)
	Close() error
}

// runUse is one run's summary.
type runUse struct {
	run int
	use api.GPUUse
}

// gpuUse holds the node's runs' summaries.
type gpuUse struct {
	mu   sync.Mutex
	runs map[string]*runUse
}

// report is what a heartbeat carries, by job id.
func (g *gpuUse) report() []api.JobGPUUse {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]api.JobGPUUse, 0, len(g.runs))
	for id, r := range g.runs {
		if r.use.Samples > 0 {
			out = append(out, api.JobGPUUse{JobID: id, Run: r.run, GPUUse: r.use})
		}
	}
	slices.SortFunc(out, func(a, b api.JobGPUUse) int { return strings.Compare(a.JobID, b.JobID) })
	return out
}

// sampled is one run to sample: its GPUs' NVML indices.
type sampled struct {
	id   string
	run  int
	nvml []int
}

// viewWait bounds the wait for a job's queued orders before its state is
// read for a sample: a job whose orders take longer is skipped this time.
const viewWait = time.Second

// toSample lists the running jobs that hold GPUs, their inventory indices
// turned into NVML's. A job's state is read behind its queued orders
// (serial), which own it.
func (s *supervisor) toSample(ctx context.Context) []sampled {
	s.mu.Lock()
	ids := make([]string, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	var out []sampled
	for _, id := range ids {
		res := make(chan sampled, 1)
		s.serial.Do(id, func() {
			var x sampled
			if j := s.get(id); j != nil && j.running {
				x = sampled{id: id, run: j.rec.Run}
				for _, i := range j.rec.GPUs {
					if i >= 0 && i < len(s.gpus) {
						x.nvml = append(x.nvml, s.gpus[i].Index)
					}
				}
			}
			res <- x
		})
		select {
		case x := <-res:
			if len(x.nvml) > 0 {
				out = append(out, x)
			}
		case <-time.After(viewWait):
		case <-ctx.Done():
			return nil
		}
	}
	return out
}

// sampleOnce samples every running job's GPUs and drops the summaries of
// runs that no longer run.
func (s *supervisor) sampleOnce(ctx context.Context, smp GPUSampler) {
	runs := s.toSample(ctx)
	if ctx.Err() != nil {
		return
	}
	live := map[string]int{}
	for _, r := range runs {
		live[r.id] = r.run
	}
	g := s.use
	g.mu.Lock()
	for id, r := range g.runs {
		if run, ok := live[id]; !ok || run != r.run {
			delete(g.runs, id)
		}
	}
	g.mu.Unlock()
	for _, r := range runs {
		samples, err := smp.Sample(r.nvml)
		if err != nil {
			s.log.Warn("cannot sample a job's GPUs", "job", r.id, "gpus", r.nvml, "err", err)
			continue
		}
		g.mu.Lock()
		u := g.runs[r.id]
		if u == nil {
			u = &runUse{run: r.run}
			g.runs[r.id] = u
		}
		gpu.AddSamples(&u.use, samples)
		g.mu.Unlock()
	}
}

// sampleGPUs samples every interval until ctx ends, then closes smp.
func (s *supervisor) sampleGPUs(ctx context.Context, smp GPUSampler, interval time.Duration) {
	defer smp.Close()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.sampleOnce(ctx, smp)
	}
}

// startSampling opens the sampler (open; nil = gpu.OpenSampler) and
// samples in the background; without NVML it does nothing.
func (s *supervisor) startSampling(ctx context.Context, open func() (GPUSampler, error), interval time.Duration) {
	if open == nil {
		open = func() (GPUSampler, error) { return gpu.OpenSampler() }
	}
	smp, err := open()
	switch {
	case errors.Is(err, gpu.ErrNoNVML):
		s.log.Info("no NVML: the jobs' GPU use is not sampled")
		return
	case err != nil:
		s.log.Error("cannot sample the jobs' GPU use", "err", err)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.sampleGPUs(ctx, smp, interval)
	}()
}
