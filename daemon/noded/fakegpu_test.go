package noded

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// With --fake-gpu-state, the GPUs' use and faults come from the file, and
// faults are checked every gpu_sample_interval where that is shorter than
// the NVML check's interval.
func TestFakeGPUOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpus.json")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name   string
		sample time.Duration
		check  time.Duration // when the fault is seen
	}{
		{"short sample interval", 2 * time.Second, 2 * time.Second},
		{"long sample interval", 5 * time.Minute, gpuCheckInterval},
		{"default sample interval", 0, gpuCheckInterval},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Config: &conf.Config{}}
			o.Config.Runtime.GPUSampleInterval = tt.sample
			fakeGPUOptions(&o, path)
			if err := os.WriteFile(path, []byte(`{"gpus":[{"index":3,"util":42}]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			smp, err := o.OpenSampler()
			if err != nil {
				t.Fatal(err)
			}
			got, err := smp.Sample([]int{3})
			if err != nil || len(got) != 1 || got[0].Util != 42 {
				t.Fatalf("sample %+v, %v", got, err)
			}
			synctest.Test(t, func(t *testing.T) {
				h := gpu.NewHealth()
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				start := time.Now()
				go o.WatchGPUs(ctx, h, gpuCheckInterval, log)
				synctest.Wait()
				if err := os.WriteFile(path, []byte(`{"gpus":[{"index":3,"faults":[{"kind":"ecc_dbe"}]}]}`), 0o644); err != nil {
					t.Fatal(err)
				}
				<-h.Changed()
				if seen := time.Since(start); seen != tt.check {
					t.Fatalf("fault seen after %v, want %v", seen, tt.check)
				}
			})
			os.Remove(path)
		})
	}
}
