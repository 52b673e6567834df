//go:build !cgo

package gpu

import (
	"context"

	"github.com/sharq-hpc/sharq/api"
)

// discoverNVML: NVML is a C library, loaded with dlopen; a program built
// without cgo cannot use it.
func discoverNVML(context.Context) ([]api.GPU, string, error) {
	return nil, "", ErrNoNVML
}
