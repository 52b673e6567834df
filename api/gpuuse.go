package api

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
