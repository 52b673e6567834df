package gpu

import (
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestXidFault(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		xid    uint64
		ok     bool
		fatal  bool
		reason string
	}{
		{79, true, true, "Xid 79: GPU has fallen off the bus"},
		{48, true, true, "Xid 48: double-bit ECC error"},
		{95, true, true, "Xid 95: uncontained ECC error"},
		{94, true, false, "Xid 94: contained ECC error"},
		{61, true, false, "Xid 61"},
		{13, false, false, ""},  // the job's own
		{31, false, false, ""},  // the job's own page fault
		{63, false, false, ""},  // a remap recorded, applied at reset
		{109, false, false, ""}, // the job's own
		{1 << 40, false, false, ""},
	}
	for _, tc := range tests {
		f, ok := XidFault(3, "GPU-x", tc.xid, t0)
		if ok != tc.ok || f.Fatal != tc.fatal || f.Reason != tc.reason {
			t.Errorf("Xid %d: %+v %v, want ok %v fatal %v reason %q", tc.xid, f, ok, tc.ok, tc.fatal, tc.reason)
		}
		if ok && (f.Index != 3 || f.UUID != "GPU-x" || f.Kind != api.GPUFaultXid || f.Xid != int(tc.xid) || !f.Time.Equal(t0)) {
			t.Errorf("Xid %d: %+v", tc.xid, f)
		}
	}
}

// Health keeps one fault per GPU and kind, the first, unless a fatal one
// follows one that was not; it signals each addition once.
func TestHealthAdd(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	h := NewHealth()
	steps := []struct {
		f     api.GPUFault
		added bool
	}{
		{api.GPUFault{Index: 2, Kind: api.GPUFaultXid, Xid: 94, Time: t0}, true},
		{api.GPUFault{Index: 2, Kind: api.GPUFaultXid, Xid: 92, Time: t0.Add(1)}, false},
		{api.GPUFault{Index: 0, Kind: api.GPUFaultRowRemap, Time: t0.Add(2)}, true},
		{api.GPUFault{Index: 2, Kind: api.GPUFaultXid, Xid: 79, Fatal: true, Time: t0.Add(3)}, true},
		{api.GPUFault{Index: 2, Kind: api.GPUFaultXid, Xid: 48, Fatal: true, Time: t0.Add(4)}, false},
		{api.GPUFault{Index: 2, Kind: api.GPUFaultECC, Fatal: true, Time: t0.Add(5)}, true},
	}
	for i, s := range steps {
		if got := h.Add(s.f); got != s.added {
			t.Errorf("step %d: Add = %v, want %v", i, got, s.added)
		}
		select {
		case <-h.Changed():
			if !s.added {
				t.Errorf("step %d: signalled without an addition", i)
			}
		default:
			if s.added {
				t.Errorf("step %d: added without a signal", i)
			}
		}
	}
	got := h.Faults()
	want := []api.GPUFault{steps[2].f, steps[5].f, steps[3].f}
	if len(got) != len(want) {
		t.Fatalf("faults %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fault %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
