//go:build cgo

package gpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/sharq-hpc/sharq/api"
)

func busID(i int) string { return fmt.Sprintf("00000000:%02X:00.0", 0x07+i) }

func pciInfo(bus string) nvml.PciInfo {
	var p nvml.PciInfo
	for i := range bus {
		p.BusId[i] = int8(bus[i])
	}
	return p
}

// fakeNode is go-nvml's DGX A100 mock with bus ids, minors and NVLinks set:
// links[i] lists GPU i's link ends (a bus id each; "" = link down).
func fakeNode(t *testing.T, n int, minors []int, links [][]string) *server.Server {
	t.Helper()
	s := dgxa100.New()
	s.Devices = s.Devices[:n]
	for i, dev := range s.Devices {
		d := dev.(*server.Device)
		d.Minor = minors[i]
		bus := busID(i)
		d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return pciInfo(bus), nvml.SUCCESS }
		ends := links[i]
		d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
			if ends == nil {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			if l >= len(ends) {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			if ends[l] == "" {
				return nvml.FEATURE_DISABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		d.GetNvLinkRemotePciInfoFunc = func(l int) (nvml.PciInfo, nvml.Return) { return pciInfo(ends[l]), nvml.SUCCESS }
	}
	return s
}

func TestDiscoverMapsNVML(t *testing.T) {
	sw := "00000000:C0:00.0" // an NVSwitch
	tests := []struct {
		name   string
		minors []int
		links  [][]string
		want   []string // topology per GPU
	}{
		{
			name:   "no nvlink",
			minors: []int{0, 1},
			links:  [][]string{nil, nil},
			want:   []string{"", ""},
		},
		{
			name:   "pairs",
			minors: []int{3, 2, 1, 0},
			links: [][]string{
				{busID(1), busID(1), ""},
				{busID(0), busID(0)},
				{"0000:0A:00.0"}, // short domain form of GPU 3
				{busID(2)},
			},
			want: []string{"nvlink gpu1x2", "nvlink gpu0x2", "nvlink gpu3x1", "nvlink gpu2x1"},
		},
		{
			name:   "nvswitch",
			minors: []int{0, 1},
			links:  [][]string{slices.Repeat([]string{sw}, 12), append(slices.Repeat([]string{sw}, 11), busID(0))},
			want:   []string{"nvlink switchx12", "nvlink gpu0x1 switchx11"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeNode(t, len(tc.minors), tc.minors, tc.links)
			gpus, driver, err := discover(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if driver != "550.54.15" {
				t.Errorf("driver = %q", driver)
			}
			if len(gpus) != len(tc.minors) {
				t.Fatalf("%d GPUs, want %d", len(gpus), len(tc.minors))
			}
			for i, g := range gpus {
				d := s.Devices[i].(*server.Device)
				want := api.GPU{
					Index: i, UUID: d.UUID, Model: "Mock NVIDIA A100-SXM4-40GB", MemBytes: d.MemoryInfo.Total,
					Device: fmt.Sprintf("/dev/nvidia%d", tc.minors[i]), PCI: busID(i), Topology: tc.want[i],
				}
				if g != want {
					t.Errorf("GPU %d = %+v\nwant %+v", i, g, want)
				}
			}
		})
	}
}

func TestDiscoverErrors(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(s *server.Server)
		is    error
	}{
		{"library missing", func(s *server.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		}, ErrNoNVML},
		{"driver not loaded", func(s *server.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
		}, nil},
		{"count fails", func(s *server.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, nil},
		{"no minor number", func(s *server.Server) {
			s.Devices[1].(*server.Device).GetMinorNumberFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
		}, nil},
		{"context ended", nil, context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeNode(t, 2, []int{0, 1}, [][]string{nil, nil})
			shutdowns := 0
			s.ShutdownFunc = func() nvml.Return { shutdowns++; return nvml.SUCCESS }
			ctx := context.Background()
			if tc.spoil != nil {
				tc.spoil(s)
			} else {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			gpus, _, err := discover(ctx, s)
			if err == nil || gpus != nil {
				t.Fatalf("discover = %v, %v; want an error", gpus, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want %v", err, tc.is)
			}
			if tc.is == nil && errors.Is(err, ErrNoNVML) {
				t.Errorf("error %v is ErrNoNVML: the library is there", err)
			}
			initOK := tc.name != "library missing" && tc.name != "driver not loaded"
			if initOK != (shutdowns == 1) {
				t.Errorf("%d Shutdown calls after Init ok=%v", shutdowns, initOK)
			}
		})
	}
}

// TestDiscoverHost runs the real NVML: on a machine without NVIDIA's
// library (CI) it must say ErrNoNVML; on a GPU machine the GPUs must be
// well formed and their device nodes present.
func TestDiscoverHost(t *testing.T) {
	gpus, source, err := Discover(context.Background())
	if _, statErr := os.Stat("/dev/nvidiactl"); err != nil {
		if !errors.Is(err, ErrNoNVML) {
			t.Fatalf("Discover: %v, want ErrNoNVML or success", err)
		}
		t.Logf("no NVML here (/dev/nvidiactl: %v)", statErr)
		return
	}
	if source != SourceNVML {
		t.Errorf("source = %q", source)
	}
	for i, g := range gpus {
		if g.Index != i || g.UUID == "" || g.Model == "" {
			t.Errorf("GPU %d = %+v", i, g)
		}
		if _, err := os.Stat(g.Device); err != nil {
			t.Errorf("GPU %d: %v", i, err)
		}
	}
	if p := Compare(len(gpus), gpus); len(p) > 0 {
		t.Errorf("problems: %q", p)
	}
}

func TestDetectWithMock(t *testing.T) {
	s := fakeNode(t, 2, []int{0, 1}, [][]string{nil, nil})
	r := detect(context.Background(), []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2"},
		func(ctx context.Context) ([]api.GPU, string, error) { return discover(ctx, s) })
	if r.Source != SourceNVML || len(r.GPUs) != 2 || r.Driver != "550.54.15" ||
		!slices.Equal(r.Problems, []string{"config declares 3 GPUs, NVML found 2"}) {
		t.Errorf("report = %+v", r)
	}
}

// TestDiscoverNVLinkPeers: NVLink pairs go-nvml's mock reports come out
// of discovery as each GPU's peers (api.GPU.NVLinkPeers), what the
// controller gives the scheduler; links through an NVSwitch are no peers.
func TestDiscoverNVLinkPeers(t *testing.T) {
	sw := "00000000:C0:00.0"
	// 0-2 and 1-3 joined directly (two links each), 3 also to the switch.
	s := fakeNode(t, 4, []int{0, 1, 2, 3}, [][]string{
		{busID(2), busID(2)},
		{busID(3), busID(3)},
		{busID(0), busID(0)},
		{busID(1), busID(1), sw},
	})
	gpus, _, err := discover(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{2}, {3}, {0}, {1}}
	for i, g := range gpus {
		if got := g.NVLinkPeers(); !slices.Equal(got, want[i]) {
			t.Errorf("GPU %d (%q): peers %v, want %v", i, g.Topology, got, want[i])
		}
	}
}
