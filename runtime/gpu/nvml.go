//go:build cgo

package gpu

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/sharq-hpc/sharq/api"
)

// discoverNVML asks the NVML library loaded at run time.
func discoverNVML(ctx context.Context) ([]api.GPU, string, error) {
	return discover(ctx, nvml.New())
}

// lib is the part of NVML Discover uses (nvml.Interface has it; tests use
// go-nvml's mock server).
type lib interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	DeviceGetCount() (int, nvml.Return)
	DeviceGetHandleByIndex(int) (nvml.Device, nvml.Return)
	SystemGetDriverVersion() (string, nvml.Return)
}

func nvmlErr(what string, ret nvml.Return) error {
	return fmt.Errorf("nvml %s: %s", what, nvml.ErrorString(ret))
}

// discover runs Init, the queries, Shutdown; it also returns the driver
// version.
func discover(ctx context.Context, l lib) (gpus []api.GPU, driver string, err error) {
	switch ret := l.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, "", ErrNoNVML
	default:
		return nil, "", nvmlErr("init", ret)
	}
	defer func() {
		if ret := l.Shutdown(); ret != nvml.SUCCESS && err == nil {
			err = nvmlErr("shutdown", ret)
		}
	}()
	if v, ret := l.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		driver = v
	}
	n, ret := l.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, "", nvmlErr("device count", ret)
	}
	devs := make([]nvml.Device, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
		d, ret := l.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, "", nvmlErr(fmt.Sprintf("device %d", i), ret)
		}
		devs[i] = d
		g, err := describe(d, i)
		if err != nil {
			return nil, "", err
		}
		gpus = append(gpus, g)
	}
	byBus := map[string]int{}
	for _, g := range gpus {
		if g.PCI != "" {
			byBus[normBusID(g.PCI)] = g.Index
		}
	}
	for i, d := range devs {
		gpus[i].Topology = nvlinks(d, byBus)
	}
	return gpus, driver, nil
}

// describe maps one NVML device to api.GPU (without topology).
func describe(d nvml.Device, i int) (api.GPU, error) {
	g := api.GPU{Index: i}
	if idx, ret := d.GetIndex(); ret == nvml.SUCCESS {
		g.Index = idx
	}
	var ret nvml.Return
	if g.UUID, ret = d.GetUUID(); ret != nvml.SUCCESS {
		return g, nvmlErr(fmt.Sprintf("GPU %d uuid", i), ret)
	}
	if g.Model, ret = d.GetName(); ret != nvml.SUCCESS {
		return g, nvmlErr(fmt.Sprintf("GPU %d name", i), ret)
	}
	if mem, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
		g.MemBytes = mem.Total
	}
	if pci, ret := d.GetPciInfo(); ret == nvml.SUCCESS {
		g.PCI = cString(pci.BusId[:])
	}
	minor, ret := d.GetMinorNumber()
	if ret != nvml.SUCCESS {
		return g, nvmlErr(fmt.Sprintf("GPU %d minor number", i), ret)
	}
	g.Device = fmt.Sprintf("/dev/nvidia%d", minor)
	return g, nil
}

// nvlinks describes d's active NVLinks: "nvlink gpu1x2 gpu3x2 switchx12"
// (peer GPU index or NVSwitch, times the number of links); "" when the GPU
// has none or NVML cannot tell.
func nvlinks(d nvml.Device, byBus map[string]int) string {
	peers := map[int]int{}
	other := 0
	for l := range nvml.NVLINK_MAX_LINKS {
		state, ret := d.GetNvLinkState(l)
		if ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT {
			break // no (more) links
		}
		if ret != nvml.SUCCESS || state != nvml.FEATURE_ENABLED {
			continue
		}
		pci, ret := d.GetNvLinkRemotePciInfo(l)
		if ret != nvml.SUCCESS {
			continue
		}
		if idx, ok := byBus[normBusID(cString(pci.BusId[:]))]; ok {
			peers[idx]++
		} else {
			other++
		}
	}
	if len(peers) == 0 && other == 0 {
		return ""
	}
	idx := make([]int, 0, len(peers))
	for i := range peers {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	parts := []string{"nvlink"}
	for _, i := range idx {
		parts = append(parts, fmt.Sprintf("gpu%dx%d", i, peers[i]))
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("switchx%d", other))
	}
	return strings.Join(parts, " ")
}

// normBusID makes "00000000:07:00.0" and "0000:07:00.0" compare equal.
func normBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.Index(s, ":"); i > 4 {
		s = s[i-4:]
	}
	return s
}

// cString converts NVML's NUL-terminated char arrays.
func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
