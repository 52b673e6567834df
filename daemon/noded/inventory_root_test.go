//go:build !unit

package noded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

func TestTakeInventory(t *testing.T) {
	dir := t.TempDir()
	var devs []string
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("nvidia%d", i))
		// Major 1 minor 3 is /dev/null: a real character device.
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		devs = append(devs, p)
	}
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, nil, 0o644)
	noNVML := func(context.Context) ([]api.GPU, string, error) {
		return nil, "", fmt.Errorf("load: %w", gpu.ErrNoNVML)
	}
	broken := func(context.Context) ([]api.GPU, string, error) {
		return nil, "", errors.New("NVML init: driver mismatch")
	}
	nvml := func(n int) DiscoverFunc {
		return func(context.Context) ([]api.GPU, string, error) {
			gs := make([]api.GPU, n)
			for i := range gs {
				gs[i] = api.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Device: fmt.Sprintf("/dev/nvidia%d", i)}
			}
			return gs, gpu.SourceNVML, nil
		}
	}
	cases := []struct {
		name       string
		node       conf.Node
		discover   DiscoverFunc
		wantSource string
		wantGPUs   int
		problems   []string // substrings, one per expected problem
	}{
		{name: "config, agrees", node: conf.Node{GPUs: 4, GPUDevices: devs}, discover: noNVML, wantSource: "config", wantGPUs: 4},
		{name: "config, no GPUs", node: conf.Node{}, discover: noNVML, wantSource: "config"},
		{
			name: "config, device missing and not a device", node: conf.Node{GPUs: 3, GPUDevices: []string{devs[0], filepath.Join(dir, "gone"), plain}},
			discover: noNVML, wantSource: "config", wantGPUs: 3,
			problems: []string{"GPU 1: device", "GPU 2: " + plain + " is not a character device"},
		},
		{
			name: "NVML broken falls back to config", node: conf.Node{GPUs: 4, GPUDevices: devs}, discover: broken,
			wantSource: "config", wantGPUs: 4, problems: []string{"driver mismatch"},
		},
		{name: "NVML agrees", node: conf.Node{GPUs: 2, GPUDevices: devs[:2]}, discover: nvml(2), wantSource: "nvml", wantGPUs: 2},
		{
			name: "NVML finds fewer than declared", node: conf.Node{GPUs: 8}, discover: nvml(6),
			wantSource: "nvml", wantGPUs: 6, problems: []string{""},
		},
		{
			name: "more CPUs and memory declared than present", discover: noNVML, wantSource: "config",
			node:     conf.Node{CPUs: goruntime.NumCPU() + 1, MemBytes: 1 << 62},
			problems: []string{"CPUs", "memory"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := TakeInventory(context.Background(), &c.node, c.discover)
			if inv.Source != c.wantSource || len(inv.GPUs) != c.wantGPUs {
				t.Errorf("source %q with %d GPUs, want %q with %d", inv.Source, len(inv.GPUs), c.wantSource, c.wantGPUs)
			}
			if inv.CPUs != goruntime.NumCPU() || inv.MemBytes <= 0 {
				t.Errorf("CPUs %d memory %d", inv.CPUs, inv.MemBytes)
			}
			if len(inv.Problems) != len(c.problems) {
				t.Fatalf("problems %q, want %d like %q", inv.Problems, len(c.problems), c.problems)
			}
			for i, want := range c.problems {
				if !strings.Contains(inv.Problems[i], want) {
					t.Errorf("problem %q does not say %q", inv.Problems[i], want)
				}
			}
		})
	}
}
