package api

import "math"

// GPUUse summarizes how one run of a job used its GPUs on one node, from
// the samples its node daemon took every gpu_sample_interval (device-level
// NVML counters: a GPU belongs to one job at a time).
type GPUUse struct {
	Samples int `json:"samples"`
	// MeanUtil is the mean over the samples of the mean utilization of
	// the job's GPUs, in percent (0..100); RecentUtil the last sample's.
	MeanUtil   float64 `json:"mean_util"`
	RecentUtil float64 `json:"recent_util"`
	// RecentMaxUtil is the last sample's utilization of the busiest of
	// the job's GPUs (the idle policy wants all of them below its
	// threshold).
	RecentMaxUtil float64 `json:"recent_max_util,omitempty"`
	// MemBytes is the GPU memory the job used at the last sample, summed
	// over its GPUs; PeakMemBytes the most of any sample.
	MemBytes     uint64 `json:"mem_bytes"`
	PeakMemBytes uint64 `json:"peak_mem_bytes"`
	// PowerWatts is the power its GPUs drew at the last sample.
	PowerWatts float64 `json:"power_watts,omitempty"`
	// IdleSamples counts the samples whose utilization was below
	// IdleUtil.
	IdleSamples int `json:"idle_samples,omitempty"`
}

// IdleUtil is the utilization, in percent, below which a sample counts as
// idle (GPU-hours "at < 5% use").
const IdleUtil = 5.0

// JobGPUUse is one run's GPU use on the sending node (NodeMsg.GPUUse).
type JobGPUUse struct {
	JobID string `json:"job_id"`
	Run   int    `json:"run"`
	GPUUse
}

// GPURun is a finished job's last run's sampled GPU use, as its history
// record keeps it (and sharqctl report usage sums it): mean utilization
// in percent, peak memory in bytes summed over its GPUs, the GPU-seconds
// sampled (all it held, when sampled at all), the part of them at < 5%
// use (by the share of idle samples), and their sum weighted by the
// utilization (efficiency = UtilGPUSeconds / SampledGPUSeconds).
type GPURun struct {
	MeanUtil          float64 `json:"mean_util"`
	PeakMemBytes      int64   `json:"peak_mem_bytes"`
	SampledGPUSeconds float64 `json:"sampled_gpu_seconds"`
	IdleGPUSeconds    float64 `json:"idle_gpu_seconds"`
	UtilGPUSeconds    float64 `json:"util_gpu_seconds"`
}

// SummarizeGPUUse is the GPURun of a run whose nodes reported u, which
// held gpuSeconds; nil when it was never sampled.
func SummarizeGPUUse(u *GPUUse, gpuSeconds float64) *GPURun {
	if u == nil || u.Samples <= 0 {
		return nil
	}
	r := &GPURun{MeanUtil: min(max(u.MeanUtil, 0), 100), PeakMemBytes: int64(min(u.PeakMemBytes, math.MaxInt64)),
		SampledGPUSeconds: gpuSeconds}
	r.IdleGPUSeconds = gpuSeconds * float64(min(max(u.IdleSamples, 0), u.Samples)) / float64(u.Samples)
	r.UtilGPUSeconds = gpuSeconds * r.MeanUtil / 100
	return r
}
