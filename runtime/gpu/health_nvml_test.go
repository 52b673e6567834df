//go:build cgo

package gpu

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/sharq-hpc/sharq/api"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// mockEvents is an NVML event set fed from a channel: Wait returns the
// next event, or ERROR_TIMEOUT after its timeout.
func mockEvents(events <-chan nvml.EventData, freed *atomic.Int32) *mock.EventSet {
	return &mock.EventSet{
		WaitFunc: func(ms uint32) (nvml.EventData, nvml.Return) {
			select {
			case e := <-events:
				return e, nvml.SUCCESS
			case <-time.After(time.Duration(ms) * time.Millisecond):
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			}
		},
		FreeFunc: func() nvml.Return { freed.Add(1); return nvml.SUCCESS },
	}
}

// gpuState is what the mock's GPUs say, changed while WatchHealth runs.
type gpuState struct {
	registered  atomic.Int32
	ecc         [4]atomic.Uint64
	remapFailed [4]atomic.Bool
	lost        [4]atomic.Bool
}

// healthyNode is a 4-GPU mock whose GPUs support the health events and
// answer as st says.
func healthyNode(t *testing.T, st *gpuState) *server.Server {
	s := fakeNode(t, 4, []int{0, 1, 2, 3}, [][]string{nil, nil, nil, nil})
	for i, dev := range s.Devices {
		d := dev.(*server.Device)
		uuid := d.UUID
		d.GetUUIDFunc = func() (string, nvml.Return) {
			if st.lost[i].Load() {
				return "", nvml.ERROR_GPU_IS_LOST
			}
			return uuid, nvml.SUCCESS
		}
		d.GetSupportedEventTypesFunc = func() (uint64, nvml.Return) {
			return nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError | nvml.EventTypeSingleBitEccError, nvml.SUCCESS
		}
		d.RegisterEventsFunc = func(types uint64, _ nvml.EventSet) nvml.Return {
			if types != healthEvents {
				t.Errorf("registered for events %#x, want %#x", types, healthEvents)
			}
			st.registered.Add(1)
			return nvml.SUCCESS
		}
		d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
			return st.ecc[i].Load(), nvml.SUCCESS
		}
		d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
			return 0, 0, false, st.remapFailed[i].Load(), nvml.SUCCESS
		}
	}
	return s
}

// WatchHealth turns NVML's events and its periodic checks into faults:
// a fatal Xid, an Xid of the job's own making (ignored), a double-bit ECC
// event, an ECC count found by the check, a failed row remap and a GPU
// that disappears; it ends with its context, freeing the event set and
// shutting NVML down.
func TestWatchHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var st gpuState
		var freed atomic.Int32
		s := healthyNode(t, &st)
		events := make(chan nvml.EventData)
		s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return mockEvents(events, &freed), nvml.SUCCESS }
		shutdowns := 0
		s.ShutdownFunc = func() nvml.Return { shutdowns++; return nvml.SUCCESS }
		dev := func(i int) *server.Device { return s.Devices[i].(*server.Device) }
		h := NewHealth()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		const interval = 30 * time.Second
		go func() { done <- watchHealth(ctx, s, h, interval, time.Now, quiet) }()
		synctest.Wait()
		if st.registered.Load() != 4 || len(h.Faults()) != 0 {
			t.Fatalf("%d GPUs registered, faults %+v at start", st.registered.Load(), h.Faults())
		}
		start := time.Now()
		events <- nvml.EventData{Device: dev(0), EventType: nvml.EventTypeXidCriticalError, EventData: 13}
		events <- nvml.EventData{Device: dev(0), EventType: nvml.EventTypeXidCriticalError, EventData: 79}
		events <- nvml.EventData{Device: dev(1), EventType: nvml.EventTypeDoubleBitEccError}
		synctest.Wait()
		<-h.Changed()
		got := h.Faults()
		if len(got) != 2 || got[0].Index != 0 || got[0].Xid != 79 || !got[0].Fatal || got[0].UUID != dev(0).UUID ||
			got[1].Index != 1 || got[1].Kind != api.GPUFaultECC || !got[1].Fatal || !got[0].Time.Equal(start) {
			t.Fatalf("after the events: %+v", got)
		}
		// GPU 2's row remapper fails, GPU 3 disappears, GPU 1 counts ECC
		// errors (already fenced for them): the next check finds them.
		st.remapFailed[2].Store(true)
		st.lost[3].Store(true)
		st.ecc[1].Store(2)
		time.Sleep(interval - time.Millisecond)
		synctest.Wait()
		if n := len(h.Faults()); n != 2 {
			t.Fatalf("%d faults before the next check", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		got = h.Faults()
		if len(got) != 4 || got[2].Index != 2 || got[2].Kind != api.GPUFaultRowRemap || got[2].Fatal ||
			got[3].Index != 3 || got[3].Kind != api.GPUFaultLost || !got[3].Fatal || !strings.Contains(got[3].Reason, "GPU lost") {
			t.Fatalf("after the check: %+v", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("watchHealth: %v", err)
		}
		if freed.Load() != 1 || shutdowns != 1 {
			t.Errorf("event set freed %d times, NVML shut down %d times", freed.Load(), shutdowns)
		}
	})
}

// Without events (the driver has none for these GPUs, or the wait fails)
// WatchHealth still checks every interval; without NVML it says so.
func TestWatchHealthWithoutEvents(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(s *server.Server)
	}{
		{"no event set", func(s *server.Server) {
			s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
		}},
		{"no supported events", func(s *server.Server) {
			for _, d := range s.Devices {
				d.(*server.Device).GetSupportedEventTypesFunc = func() (uint64, nvml.Return) { return nvml.EventTypeSingleBitEccError, nvml.SUCCESS }
			}
		}},
		{"a GPU stays lost", func(s *server.Server) {
			s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
				return &mock.EventSet{
					WaitFunc: func(uint32) (nvml.EventData, nvml.Return) { return nvml.EventData{}, nvml.ERROR_GPU_IS_LOST },
					FreeFunc: func() nvml.Return { return nvml.SUCCESS },
				}, nvml.SUCCESS
			}
		}},
		{"wait fails", func(s *server.Server) {
			s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
				return &mock.EventSet{
					WaitFunc: func(uint32) (nvml.EventData, nvml.Return) { return nvml.EventData{}, nvml.ERROR_UNKNOWN },
					FreeFunc: func() nvml.Return { return nvml.SUCCESS },
				}, nvml.SUCCESS
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var st gpuState
				var freed atomic.Int32
				s := healthyNode(t, &st)
				s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return mockEvents(nil, &freed), nvml.SUCCESS }
				tc.spoil(s)
				h := NewHealth()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error)
				go func() { done <- watchHealth(ctx, s, h, time.Minute, time.Now, quiet) }()
				synctest.Wait()
				st.ecc[1].Store(1)
				time.Sleep(time.Minute)
				synctest.Wait()
				if got := h.Faults(); len(got) != 1 || got[0].Index != 1 || got[0].Kind != api.GPUFaultECC {
					t.Errorf("faults %+v, want GPU 1's ECC errors", got)
				}
				cancel()
				if err := <-done; err != nil {
					t.Errorf("watchHealth: %v", err)
				}
			})
		})
	}
	s := healthyNode(t, new(gpuState))
	s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	if err := watchHealth(context.Background(), s, NewHealth(), time.Minute, time.Now, quiet); err != ErrNoNVML {
		t.Errorf("without NVML: %v, want ErrNoNVML", err)
	}
}
