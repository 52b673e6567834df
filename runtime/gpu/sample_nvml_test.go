//go:build cgo

package gpu

import (
	"errors"
	"testing"

	"github.com/sharq-hpc/sharq/api"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// sampledNode is an 8-GPU mock whose GPU i is (10*i)% busy, uses i GiB
// and draws 100+i W; handles counts the handle look-ups.
func sampledNode(handles *int) *server.Server {
	s := dgxa100.New()
	get := s.DeviceGetHandleByIndexFunc
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) { *handles++; return get(i) }
	for i, dev := range s.Devices {
		d := dev.(*server.Device)
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(10 * i), Memory: 1}, nvml.SUCCESS
		}
		d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 40 << 30, Used: uint64(i) << 30}, nvml.SUCCESS
		}
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return uint32(100000 + 1000*i), nvml.SUCCESS }
	}
	return s
}

func TestSampler(t *testing.T) {
	handles := 0
	s := sampledNode(&handles)
	smp, err := openSampler(s)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := smp.Sample([]int{2, 7})
		if err != nil {
			t.Fatal(err)
		}
		want := []Sample{{Index: 2, Util: 20, MemUsed: 2 << 30, PowerMW: 102000}, {Index: 7, Util: 70, MemUsed: 7 << 30, PowerMW: 107000}}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("samples %+v, want %+v", got, want)
		}
	}
	if handles != 2 {
		t.Errorf("%d handle look-ups for 2 GPUs sampled twice: handles are kept", handles)
	}
	// A GPU without power readings and one whose memory cannot be read.
	s.Devices[3].(*server.Device).GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	s.Devices[4].(*server.Device).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_UNKNOWN }
	got, err := smp.Sample([]int{3, 4})
	if err != nil || got[0].PowerMW != 0 || got[0].Problems || !got[1].Problems || got[1].MemUsed != 0 || got[1].Util != 40 {
		t.Errorf("samples %+v, %v", got, err)
	}
	// A GPU that fell off the bus is an error, and looked up again next time.
	s.Devices[5].(*server.Device).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST }
	if _, err := smp.Sample([]int{5}); err == nil {
		t.Error("a lost GPU sampled without an error")
	}
	if _, err := smp.Sample([]int{5}); err == nil || handles != 6 {
		t.Errorf("lost GPU again: %v, %d look-ups", err, handles)
	}
	if err := smp.Close(); err != nil {
		t.Error(err)
	}
	s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	if _, err := openSampler(s); !errors.Is(err, ErrNoNVML) {
		t.Errorf("open without NVML: %v", err)
	}
}

// BenchmarkSample8GPUs is one sampling instant of a node's 8 GPUs through
// the Sampler and AddSamples, NVML mocked (the driver's own time is not
// in it): what sharqd spends besides NVML every gpu_sample_interval.
func BenchmarkSample8GPUs(b *testing.B) {
	handles := 0
	smp, err := openSampler(sampledNode(&handles))
	if err != nil {
		b.Fatal(err)
	}
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	var u api.GPUUse
	b.ReportAllocs()
	for b.Loop() {
		s, err := smp.Sample(all)
		if err != nil {
			b.Fatal(err)
		}
		AddSamples(&u, s)
	}
}
