package gpu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// The fake GPU source, for tests and benchmarks only (never production):
// a JSON state file that a test writes stands in for NVML, per GPU index
// its utilization, memory used, power and injected faults. sharqd reads it
// (its --fake-gpu-state flag) on every sample of the jobs' GPU use and
// every health check, with the same interfaces as the NVML code: Sample
// for gpu.Sampler, WatchHealth for gpu.WatchHealth. Its GPUs are the
// configuration's (gpu_devices, the fake device files of the e2e tests);
// an index the file does not list reads as an idle, healthy GPU.
//
//	{"gpus": [
//	  {"index": 0, "util": 93, "mem_used": 17179869184, "power_mw": 250000},
//	  {"index": 1, "faults": [{"xid": 79}, {"kind": "ecc_dbe"}]}
//	]}
//
// A fault is an Xid (judged as a driver's Xid event is: XidFault) or a
// kind that the periodic NVML check finds: "ecc_dbe" (double-bit ECC
// errors), "row_remap" (a failed row remap), "lost" (the GPU fell off the
// bus).

// MaxFakeStateBytes bounds a fake state file.
const MaxFakeStateBytes = 1 << 20

// maxFakeIndex bounds the GPU indices of a fake state file.
const maxFakeIndex = 1023

// FakeState is the content of a fake state file.
type FakeState struct {
	GPUs []FakeGPU `json:"gpus"`
}

// FakeGPU is one GPU of a fake state file.
type FakeGPU struct {
	Index   int         `json:"index"`
	Util    uint32      `json:"util"`     // percent, 0..100
	MemUsed uint64      `json:"mem_used"` // bytes
	PowerMW uint32      `json:"power_mw"`
	Faults  []FakeFault `json:"faults,omitempty"`
}

// FakeFault is a fault injected on a fake GPU: an Xid, or a Kind.
type FakeFault struct {
	Xid  uint64           `json:"xid,omitempty"`
	Kind api.GPUFaultKind `json:"kind,omitempty"`
}

// ErrFakeState: a fake state file is malformed.
var ErrFakeState = errors.New("bad fake GPU state")

// DecodeFakeState reads a fake state file's content and checks it: one
// entry per index, indices 0..1023, utilization at most 100, a fault with
// an Xid or a known kind but not both.
func DecodeFakeState(data []byte) (FakeState, error) {
	var st FakeState
	if len(data) > MaxFakeStateBytes {
		return st, fmt.Errorf("%w: over %d bytes", ErrFakeState, MaxFakeStateBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return FakeState{}, fmt.Errorf("%w: %w", ErrFakeState, err)
	}
	if dec.More() {
		return FakeState{}, fmt.Errorf("%w: data after the JSON object", ErrFakeState)
	}
	seen := map[int]bool{}
	for _, g := range st.GPUs {
		switch {
		case g.Index < 0 || g.Index > maxFakeIndex:
			return FakeState{}, fmt.Errorf("%w: GPU index %d out of range 0..%d", ErrFakeState, g.Index, maxFakeIndex)
		case seen[g.Index]:
			return FakeState{}, fmt.Errorf("%w: GPU index %d appears twice", ErrFakeState, g.Index)
		case g.Util > 100:
			return FakeState{}, fmt.Errorf("%w: GPU %d: util %d over 100", ErrFakeState, g.Index, g.Util)
		}
		seen[g.Index] = true
		for _, f := range g.Faults {
			switch {
			case f.Xid != 0 && f.Kind != "":
				return FakeState{}, fmt.Errorf("%w: GPU %d: a fault has an xid and a kind", ErrFakeState, g.Index)
			case f.Xid == 0 && f.Kind != api.GPUFaultECC && f.Kind != api.GPUFaultRowRemap && f.Kind != api.GPUFaultLost:
				return FakeState{}, fmt.Errorf("%w: GPU %d: fault %q is neither an xid nor one of ecc_dbe, row_remap, lost", ErrFakeState, g.Index, f.Kind)
			}
		}
	}
	return st, nil
}

// ReadFakeState reads and decodes the fake state file at path, at most
// MaxFakeStateBytes of it.
func ReadFakeState(path string) (FakeState, error) {
	f, err := os.Open(path)
	if err != nil {
		return FakeState{}, fmt.Errorf("fake GPU state: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFakeStateBytes+1))
	if err != nil {
		return FakeState{}, fmt.Errorf("fake GPU state %s: %w", path, err)
	}
	st, err := DecodeFakeState(data)
	if err != nil {
		return FakeState{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// gpu returns index's entry; an index not listed is idle and healthy.
func (st FakeState) gpu(index int) FakeGPU {
	for _, g := range st.GPUs {
		if g.Index == index {
			return g
		}
	}
	return FakeGPU{Index: index}
}

// Faults is what the state's injected faults mean at t, as the NVML watch
// would record them.
func (st FakeState) Faults(t time.Time) []api.GPUFault {
	var out []api.GPUFault
	for _, g := range st.GPUs {
		for _, f := range g.Faults {
			if f.Xid != 0 {
				if x, ok := XidFault(g.Index, "", f.Xid, t); ok {
					out = append(out, x)
				}
				continue
			}
			x := api.GPUFault{Index: g.Index, Kind: f.Kind, Fatal: true, Time: t}
			switch f.Kind {
			case api.GPUFaultECC:
				x.Reason = "double-bit ECC error"
			case api.GPUFaultRowRemap:
				x.Fatal = false
				x.Reason = "row remapping failed: memory rows with uncorrectable errors could not be replaced"
			case api.GPUFaultLost:
				x.Reason = "GPU lost: it fell off the bus"
			}
			out = append(out, x)
		}
	}
	return out
}

// FakeSource is the fake GPU source of one node: its state file.
type FakeSource struct {
	Path string
	// Now reads the clock for faults' times; nil = time.Now.
	Now func() time.Time
}

// Sample reads the state file and returns the GPUs' samples, as
// Sampler.Sample does.
func (s *FakeSource) Sample(indices []int) ([]Sample, error) {
	st, err := ReadFakeState(s.Path)
	if err != nil {
		return nil, err
	}
	out := make([]Sample, len(indices))
	for i, idx := range indices {
		g := st.gpu(idx)
		out[i] = Sample{Index: idx, Util: g.Util, MemUsed: g.MemUsed, PowerMW: g.PowerMW}
	}
	return out, nil
}

// Close does nothing: the file is opened at each read.
func (s *FakeSource) Close() error { return nil }

// WatchHealth reads the state file at once and every interval until ctx
// ends, recording its faults in h, as gpu.WatchHealth does with NVML. A
// file that cannot be read is logged and read again at the next interval.
func (s *FakeSource) WatchHealth(ctx context.Context, h *Health, interval time.Duration, log *slog.Logger) error {
	if interval <= 0 {
		return fmt.Errorf("fake GPU state %s: check interval %v", s.Path, interval)
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	check := func() {
		st, err := ReadFakeState(s.Path)
		if err != nil {
			log.Warn("cannot check the fake GPUs", "err", err)
			return
		}
		for _, f := range st.Faults(now()) {
			if h.Add(f) {
				log.Warn("GPU fault", "gpu", f.Index, "kind", f.Kind, "reason", f.Reason, "fatal", f.Fatal, "source", "fake")
			}
		}
	}
	check()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			check()
		}
	}
}
