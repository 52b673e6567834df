//go:build cgo

package gpu

import (
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// sampleLib is the part of NVML a Sampler uses (nvml.Interface has it;
// tests use go-nvml's mock server).
type sampleLib interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	DeviceGetHandleByIndex(int) (nvml.Device, nvml.Return)
}

// Sampler reads the utilization, memory and power of GPUs through NVML,
// which it keeps initialized until Close. Safe for concurrent use.
type Sampler struct {
	mu   sync.Mutex
	l    sampleLib
	devs map[int]nvml.Device
}

// OpenSampler initializes NVML for sampling; ErrNoNVML where it is absent.
func OpenSampler() (*Sampler, error) { return openSampler(nvml.New()) }

func openSampler(l sampleLib) (*Sampler, error) {
	switch ret := l.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, ErrNoNVML
	default:
		return nil, nvmlErr("init", ret)
	}
	return &Sampler{l: l, devs: map[int]nvml.Device{}}, nil
}

// Sample reads the GPUs of the given NVML indices. A value a GPU cannot
// give reads 0 and sets Problems; a GPU NVML cannot reach is an error.
func (s *Sampler) Sample(indices []int) ([]Sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Sample, 0, len(indices))
	for _, i := range indices {
		d, ok := s.devs[i]
		if !ok {
			var ret nvml.Return
			if d, ret = s.l.DeviceGetHandleByIndex(i); ret != nvml.SUCCESS {
				return nil, fmt.Errorf("GPU %d: %w", i, nvmlErr("handle", ret))
			}
			s.devs[i] = d
		}
		smp := Sample{Index: i}
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			smp.Util = u.Gpu
		} else if ret == nvml.ERROR_GPU_IS_LOST {
			delete(s.devs, i)
			return nil, fmt.Errorf("GPU %d: %w", i, nvmlErr("utilization", ret))
		} else {
			smp.Problems = true
		}
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			smp.MemUsed = m.Used
		} else {
			smp.Problems = true
		}
		if p, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
			smp.PowerMW = p
		}
		out = append(out, smp)
	}
	return out, nil
}

// Close shuts NVML down.
func (s *Sampler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ret := s.l.Shutdown(); ret != nvml.SUCCESS {
		return nvmlErr("shutdown", ret)
	}
	return nil
}
