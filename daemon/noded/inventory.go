package noded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// DiscoverFunc finds the node's GPUs, as gpu.Discover does: the list and
// its source (gpu.SourceNVML), or an error wrapping gpu.ErrNoNVML where
// NVIDIA's library is absent.
type DiscoverFunc func(ctx context.Context) ([]api.GPU, string, error)

// Inventory is what the node reports in its hello, with the ways in which
// the node disagrees with its configuration (empty when it agrees).
type Inventory struct {
	api.Inventory
	Problems []string
}

// TakeInventory finds the node's GPUs, CPUs and memory. GPUs come from NVML
// when discover finds NVIDIA's library, otherwise from the devices the
// configuration declares; either way a disagreement with the configuration
// (another GPU count, a declared device node that is missing, fewer CPUs or
// less memory than declared) is a Problem, reported, never hidden.
func TakeInventory(ctx context.Context, node *conf.Node, discover DiscoverFunc) Inventory {
	var inv Inventory
	gpus, source, err := discover(ctx)
	switch {
	case err == nil:
		if source == "" {
			source = gpu.SourceNVML
		}
		inv.GPUs, inv.Source = gpus, source
		inv.Problems = append(inv.Problems, gpu.Compare(node.GPUs, gpus)...)
	default:
		if !errors.Is(err, gpu.ErrNoNVML) {
			inv.Problems = append(inv.Problems, fmt.Sprintf("GPU discovery failed, using the configured GPUs: %v", err))
		}
		inv.GPUs, inv.Source = gpu.FromConfig(node.GPUDevices), gpu.SourceConfig
		if len(inv.GPUs) != node.GPUs {
			inv.Problems = append(inv.Problems, fmt.Sprintf("config declares %d GPUs but %d device nodes", node.GPUs, len(inv.GPUs)))
		}
		for _, g := range inv.GPUs {
			if err := checkCharDevice(g.Device); err != nil {
				inv.Problems = append(inv.Problems, fmt.Sprintf("GPU %d: %v", g.Index, err))
			}
		}
	}
	if inv.GPUs == nil {
		inv.GPUs = []api.GPU{}
	}
	inv.CPUs = goruntime.NumCPU()
	if node.CPUs > inv.CPUs {
		inv.Problems = append(inv.Problems, fmt.Sprintf("config declares %d CPUs, the node has %d", node.CPUs, inv.CPUs))
	}
	mem, err := memTotal("/proc/meminfo")
	if err != nil {
		inv.Problems = append(inv.Problems, fmt.Sprintf("memory: %v", err))
	}
	inv.MemBytes = mem
	if err == nil && node.MemBytes > mem {
		inv.Problems = append(inv.Problems, fmt.Sprintf("config declares %d bytes of memory, the node has %d", node.MemBytes, mem))
	}
	return inv
}

// checkCharDevice says why path is not a character device, or nil.
func checkCharDevice(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("device %w", err)
	}
	if fi.Mode()&os.ModeCharDevice == 0 {
		return fmt.Errorf("%s is not a character device", path)
	}
	return nil
}

// memTotal reads MemTotal from a meminfo file, in bytes.
func memTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseMemTotal(f)
}

// parseMemTotal finds "MemTotal: N kB" in /proc/meminfo's format.
func parseMemTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("meminfo: malformed MemTotal line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			return 0, fmt.Errorf("meminfo: malformed MemTotal line %q", sc.Text())
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("meminfo: %w", err)
	}
	return 0, errors.New("meminfo: no MemTotal line")
}
