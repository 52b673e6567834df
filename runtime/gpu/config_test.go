package gpu

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

func TestFromConfig(t *testing.T) {
	got := FromConfig([]string{"/dev/nvidia0", "/dev/nvidia2"})
	want := []api.GPU{{Index: 0, Device: "/dev/nvidia0"}, {Index: 1, Device: "/dev/nvidia2"}}
	if !slices.Equal(got, want) {
		t.Errorf("FromConfig = %+v, want %+v", got, want)
	}
	if got := FromConfig(nil); len(got) != 0 {
		t.Errorf("FromConfig(nil) = %+v", got)
	}
}

func TestCompare(t *testing.T) {
	gpus := func(devs ...string) []api.GPU { return FromConfig(devs) }
	tests := []struct {
		name     string
		declared int
		found    []api.GPU
		want     []string
	}{
		{"agree", 2, gpus("/dev/nvidia0", "/dev/nvidia1"), nil},
		{"nothing declared", 0, gpus("/dev/nvidia0"), nil},
		{"fewer found", 8, gpus("/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"), []string{"config declares 8 GPUs, NVML found 4"}},
		{"more found", 1, gpus("/dev/nvidia0", "/dev/nvidia1"), []string{"config declares 1 GPUs, NVML found 2"}},
		{"shared device", 2, gpus("/dev/nvidia0", "/dev/nvidia0"), []string{"GPUs 0 and 1 share device /dev/nvidia0"}},
		{"duplicate index", 2, []api.GPU{{Index: 0, Device: "/dev/nvidia0"}, {Index: 0, Device: "/dev/nvidia1"}}, []string{"GPU index 0 appears twice"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare(tc.declared, tc.found); !slices.Equal(got, tc.want) {
				t.Errorf("Compare = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	declared := []string{"/dev/nvidia0", "/dev/nvidia1"}
	tests := []struct {
		name    string
		find    func(context.Context) ([]api.GPU, string, error)
		source  string
		gpus    int
		problem string
	}{
		{"no nvml", func(context.Context) ([]api.GPU, string, error) { return nil, "", ErrNoNVML }, SourceConfig, 2, ""},
		{"nvml broken", func(context.Context) ([]api.GPU, string, error) { return nil, "", errors.New("driver mismatch") }, SourceConfig, 2, "driver mismatch"},
		{"nvml", func(context.Context) ([]api.GPU, string, error) {
			return FromConfig([]string{"/dev/nvidia0"}), "550", nil
		}, SourceNVML, 1, "config declares 2 GPUs, NVML found 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := detect(context.Background(), declared, tc.find)
			if r.Source != tc.source || len(r.GPUs) != tc.gpus {
				t.Errorf("report = %+v, want source %s with %d GPUs", r, tc.source, tc.gpus)
			}
			joined := strings.Join(r.Problems, "; ")
			if (tc.problem == "") != (joined == "") || !strings.Contains(joined, tc.problem) {
				t.Errorf("problems %q, want %q", r.Problems, tc.problem)
			}
		})
	}
}
