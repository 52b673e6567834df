package gpu

import (
	"context"
	"errors"

	"github.com/sharq-hpc/sharq/api"
)

// Inventory sources (api.Inventory.Source).
const (
	SourceNVML   = "nvml"
	SourceConfig = "config"
)

// ErrNoNVML means libnvidia-ml is not installed (no NVIDIA driver here),
// or the program was built without cgo, which NVML needs.
var ErrNoNVML = errors.New("NVML library not found")

// Discover lists the GPUs NVML sees, in NVML index order; source is
// SourceNVML. Without NVML it returns ErrNoNVML.
func Discover(ctx context.Context) (gpus []api.GPU, source string, err error) {
	gpus, _, err = discoverNVML(ctx)
	if err != nil {
		return nil, "", err
	}
	return gpus, SourceNVML, nil
}
