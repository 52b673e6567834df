package gpu

import "github.com/sharq-hpc/sharq/api"

// Sample is what NVML says of one GPU at one instant.
type Sample struct {
	Index    int
	Util     uint32 // percent of time a kernel ran over the last sample period
	MemUsed  uint64 // bytes
	PowerMW  uint32 // milliwatts; 0 when the GPU cannot tell
	Problems bool   // some value could not be read (it counts as 0)
}

// AddSamples adds one sampling instant of a job's GPUs to its summary: the
// utilization is their mean, memory and power their sums.
func AddSamples(u *api.GPUUse, samples []Sample) {
	if len(samples) == 0 {
		return
	}
	var util, top float64
	var mem uint64
	var power float64
	for _, s := range samples {
		util += float64(min(s.Util, 100))
		top = max(top, float64(min(s.Util, 100)))
		mem += s.MemUsed
		power += float64(s.PowerMW) / 1000
	}
	util /= float64(len(samples))
	u.MeanUtil = (u.MeanUtil*float64(u.Samples) + util) / float64(u.Samples+1)
	u.Samples++
	u.RecentUtil = util
	u.RecentMaxUtil = top
	u.MemBytes = mem
	u.PeakMemBytes = max(u.PeakMemBytes, mem)
	u.PowerWatts = power
	if util < api.IdleUtil {
		u.IdleSamples++
	}
}
