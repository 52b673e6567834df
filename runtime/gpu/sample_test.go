package gpu

import (
	"math"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// AddSamples keeps the mean of the per-instant mean utilization, the last
// one, the memory now and at its peak, and counts the idle instants.
func TestAddSamples(t *testing.T) {
	var u api.GPUUse
	AddSamples(&u, nil) // no GPU: nothing
	steps := []struct {
		samples []Sample
		want    api.GPUUse
	}{
		{[]Sample{{Util: 100, MemUsed: 10 << 30, PowerMW: 300000}, {Util: 50, MemUsed: 6 << 30, PowerMW: 200000}},
			api.GPUUse{Samples: 1, MeanUtil: 75, RecentUtil: 75, RecentMaxUtil: 100, MemBytes: 16 << 30, PeakMemBytes: 16 << 30, PowerWatts: 500}},
		{[]Sample{{Util: 0, MemUsed: 1 << 30}, {Util: 6, MemUsed: 1 << 30, PowerMW: 60000}},
			api.GPUUse{Samples: 2, MeanUtil: 39, RecentUtil: 3, RecentMaxUtil: 6, MemBytes: 2 << 30, PeakMemBytes: 16 << 30, PowerWatts: 60, IdleSamples: 1}},
		{[]Sample{{Util: 250}, {Util: 100}}, // a counter out of range counts as 100
			api.GPUUse{Samples: 3, MeanUtil: 59.333333333333336, RecentUtil: 100, RecentMaxUtil: 100, PeakMemBytes: 16 << 30, IdleSamples: 1}},
	}
	for i, s := range steps {
		AddSamples(&u, s.samples)
		if math.Abs(u.MeanUtil-s.want.MeanUtil) > 1e-9 {
			t.Errorf("step %d: mean %v, want %v", i, u.MeanUtil, s.want.MeanUtil)
		}
		got := u
		got.MeanUtil = s.want.MeanUtil
		if got != s.want {
			t.Errorf("step %d: %+v, want %+v", i, got, s.want)
		}
	}
}
