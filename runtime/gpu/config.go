package gpu

import (
	"context"
	"errors"
	"fmt"

	"github.com/sharq-hpc/sharq/api"
)

// FromConfig returns the GPUs a node's configuration declares: GPU i is
// devices[i].
func FromConfig(devices []string) []api.GPU {
	gpus := make([]api.GPU, len(devices))
	for i, d := range devices {
		gpus[i] = api.GPU{Index: i, Device: d}
	}
	return gpus
}

// Compare lists the disagreements between the GPU count a configuration
// declares (0: none declared, nothing to compare) and the GPUs found.
func Compare(declared int, found []api.GPU) []string {
	var problems []string
	if declared > 0 && declared != len(found) {
		problems = append(problems, fmt.Sprintf("config declares %d GPUs, NVML found %d", declared, len(found)))
	}
	seen := map[int]bool{}
	devs := map[string]int{}
	for _, g := range found {
		if seen[g.Index] {
			problems = append(problems, fmt.Sprintf("GPU index %d appears twice", g.Index))
		}
		seen[g.Index] = true
		if prev, ok := devs[g.Device]; ok {
			problems = append(problems, fmt.Sprintf("GPUs %d and %d share device %s", prev, g.Index, g.Device))
		}
		devs[g.Device] = g.Index
	}
	return problems
}

// Report is what Detect found.
type Report struct {
	GPUs     []api.GPU `json:"gpus"`
	Source   string    `json:"source"`           // SourceNVML or SourceConfig
	Driver   string    `json:"driver,omitempty"` // NVIDIA driver version, with NVML
	Problems []string  `json:"problems,omitempty"`
}

// Detect returns the node's GPUs: NVML's where NVML works (Problems then
// lists disagreements with the declared devices), else the declared ones
// (Problems says why NVML was not used, unless it is simply absent).
func Detect(ctx context.Context, declared []string) Report {
	return detect(ctx, declared, discoverNVML)
}

func detect(ctx context.Context, declared []string, find func(context.Context) ([]api.GPU, string, error)) Report {
	gpus, driver, err := find(ctx)
	switch {
	case err == nil:
		return Report{GPUs: gpus, Source: SourceNVML, Driver: driver, Problems: Compare(len(declared), gpus)}
	case errors.Is(err, ErrNoNVML):
		return Report{GPUs: FromConfig(declared), Source: SourceConfig}
	default:
		return Report{GPUs: FromConfig(declared), Source: SourceConfig, Problems: []string{fmt.Sprintf("NVML failed, using configured GPUs: %v", err)}}
	}
}
