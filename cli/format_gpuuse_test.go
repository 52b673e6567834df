package cli

import (
	"slices"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// qstat -f shows a job's sampled GPU use among resources_used, in
// OpenPBS's alphabetical order, and nothing before its first sample.
func TestPBSGPUUse(t *testing.T) {
	j := &api.Job{ID: "7.t", State: api.StateRunning, StartTime: time.Unix(1000, 0), Used: time.Hour}
	j.Resources.Nodes, j.Resources.GPUsPerNode = 1, 2
	keys := func() []string {
		var out []string
		for _, a := range pbsJobAttrs(j, time.UTC) {
			if a.name == "resources_used" {
				out = append(out, a.key()+"="+a.value)
			}
		}
		return out
	}
	plain := []string{"resources_used.ncpus=1", "resources_used.ngpus=2", "resources_used.walltime=01:00:00"}
	if got := keys(); !slices.Equal(got, plain) {
		t.Errorf("without samples: %q", got)
	}
	j.GPUUse = &api.GPUUse{}
	if got := keys(); !slices.Equal(got, plain) {
		t.Errorf("with no sample yet: %q", got)
	}
	j.GPUUse = &api.GPUUse{Samples: 10, MeanUtil: 42.6, RecentUtil: 3.2, MemBytes: 1 << 30, PeakMemBytes: 24 << 30}
	want := append([]string{"resources_used.gpu_mem=24gb", "resources_used.gpu_util=43", "resources_used.gpu_util_recent=3"}, plain...)
	if got := keys(); !slices.Equal(got, want) {
		t.Errorf("sampled: %q, want %q", got, want)
	}
}
