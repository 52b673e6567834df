//go:build !cgo

package gpu

// Sampler reads GPU counters through NVML; without cgo there is none.
type Sampler struct{}

// OpenSampler: NVML is a C library; a program built without cgo cannot
// read it.
func OpenSampler() (*Sampler, error) { return nil, ErrNoNVML }

// Sample is never reached without cgo.
func (*Sampler) Sample(indices []int) ([]Sample, error) { return nil, ErrNoNVML }

// Close does nothing.
func (*Sampler) Close() error { return nil }
