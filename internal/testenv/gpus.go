package testenv

import (
	"fmt"
	"path/filepath"

	"github.com/sharq-hpc/sharq/internal/ctrd"
)

// ErrNoFreeMajor means every local/experimental major is registered.
var ErrNoFreeMajor = ctrd.ErrNoFreeMajor

// FakeGPUMajor returns the major number MakeFakeGPUs uses: the first of the
// local/experimental majors /proc/devices does not list (see
// ctrd.FakeGPUMajor for why opening a fake GPU tells an allowed device from
// a denied one).
func FakeGPUMajor() (uint32, error) { return ctrd.FakeGPUMajor() }

// MakeFakeGPUs creates dir/nvidia0 .. dir/nvidia<n-1>: character devices
// FakeGPUMajor():i, mode 0666; an existing node is an error. It returns
// their paths in index order.
func MakeFakeGPUs(dir string, n int) ([]string, error) {
	paths := make([]string, n)
	for i := range n {
		paths[i] = filepath.Join(dir, fmt.Sprintf("nvidia%d", i))
	}
	if err := ctrd.MakeFakeGPUs(paths, false); err != nil {
		return nil, err
	}
	return paths, nil
}
