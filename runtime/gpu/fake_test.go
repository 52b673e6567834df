package gpu

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestDecodeFakeState(t *testing.T) {
	tests := []struct {
		name, in string
		gpus     int
		bad      string // a part of the error, "" = none
	}{
		{"empty", `{}`, 0, ""},
		{"two", `{"gpus":[{"index":0,"util":93,"mem_used":1024,"power_mw":250000},{"index":1,"faults":[{"xid":79},{"kind":"ecc_dbe"}]}]}`, 2, ""},
		{"all kinds", `{"gpus":[{"index":3,"faults":[{"kind":"row_remap"},{"kind":"lost"},{"xid":13}]}]}`, 1, ""},
		{"not json", `{"gpus":`, 0, "unexpected EOF"},
		{"unknown field", `{"gpus":[{"index":0,"utilization":5}]}`, 0, "unknown field"},
		{"trailing", `{} {}`, 0, "data after"},
		{"negative index", `{"gpus":[{"index":-1}]}`, 0, "out of range"},
		{"huge index", `{"gpus":[{"index":1024}]}`, 0, "out of range"},
		{"twice", `{"gpus":[{"index":2},{"index":2}]}`, 0, "appears twice"},
		{"util", `{"gpus":[{"index":0,"util":101}]}`, 0, "over 100"},
		{"xid and kind", `{"gpus":[{"index":0,"faults":[{"xid":79,"kind":"lost"}]}]}`, 0, "an xid and a kind"},
		{"no fault", `{"gpus":[{"index":0,"faults":[{}]}]}`, 0, "neither"},
		{"unknown kind", `{"gpus":[{"index":0,"faults":[{"kind":"melted"}]}]}`, 0, "neither"},
		{"negative util", `{"gpus":[{"index":0,"util":-1}]}`, 0, "cannot unmarshal"},
		{"too big", `{"gpus":[]}` + strings.Repeat(" ", MaxFakeStateBytes), 0, "over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := DecodeFakeState([]byte(tt.in))
			if tt.bad != "" {
				if err == nil || !errors.Is(err, ErrFakeState) || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("err = %v, want ErrFakeState with %q", err, tt.bad)
				}
				return
			}
			if err != nil || len(st.GPUs) != tt.gpus {
				t.Fatalf("got %+v, %v", st, err)
			}
		})
	}
}

func TestFakeStateFaults(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st, err := DecodeFakeState([]byte(`{"gpus":[{"index":1,"faults":[{"xid":79},{"xid":13},{"xid":92},{"kind":"ecc_dbe"},{"kind":"row_remap"},{"kind":"lost"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []api.GPUFault{
		{Index: 1, Kind: api.GPUFaultXid, Xid: 79, Fatal: true, Reason: "Xid 79: GPU has fallen off the bus", Time: at},
		{Index: 1, Kind: api.GPUFaultXid, Xid: 92, Reason: "Xid 92: high single-bit ECC error rate", Time: at},
		{Index: 1, Kind: api.GPUFaultECC, Fatal: true, Reason: "double-bit ECC error", Time: at},
		{Index: 1, Kind: api.GPUFaultRowRemap, Reason: "row remapping failed: memory rows with uncorrectable errors could not be replaced", Time: at},
		{Index: 1, Kind: api.GPUFaultLost, Fatal: true, Reason: "GPU lost: it fell off the bus", Time: at},
	}
	got := st.Faults(at)
	if len(got) != len(want) {
		t.Fatalf("faults %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fault %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func writeState(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFakeSourceSample(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpus.json")
	src := &FakeSource{Path: path}
	if _, err := src.Sample([]int{0}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: err = %v", err)
	}
	writeState(t, path, `{"gpus":[{"index":0,"util":93,"mem_used":1024,"power_mw":250000},{"index":2,"util":4}]}`)
	got, err := src.Sample([]int{2, 0, 5})
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{{Index: 2, Util: 4}, {Index: 0, Util: 93, MemUsed: 1024, PowerMW: 250000}, {Index: 5}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// The file is read at each sample.
	writeState(t, path, `{"gpus":[{"index":0,"util":0}]}`)
	if got, err := src.Sample([]int{0}); err != nil || got[0].Util != 0 {
		t.Fatalf("after a change: %+v, %v", got, err)
	}
	writeState(t, path, `{"gpus":[{"index":0,"util":200}]}`)
	if _, err := src.Sample([]int{0}); !errors.Is(err, ErrFakeState) || !strings.Contains(err.Error(), path) {
		t.Fatalf("bad file: err = %v", err)
	}
	writeState(t, path, `{"gpus":[]}`+strings.Repeat(" ", MaxFakeStateBytes))
	if _, err := src.Sample([]int{0}); !errors.Is(err, ErrFakeState) {
		t.Fatalf("oversized file: err = %v", err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestFakeSourceWatchHealth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpus.json")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	synctest.Test(t, func(t *testing.T) {
		src := &FakeSource{Path: path}
		h := NewHealth()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- src.WatchHealth(ctx, h, 5*time.Second, log) }()
		synctest.Wait()
		if f := h.Faults(); len(f) != 0 {
			t.Fatalf("faults with no file: %+v", f)
		}
		writeState(t, path, `{"gpus":[{"index":1,"util":50,"faults":[{"xid":79}]}]}`)
		synctest.Wait()
		if f := h.Faults(); len(f) != 0 {
			t.Fatalf("faults before the next check: %+v", f)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		f := h.Faults()
		if len(f) != 1 || f[0].Index != 1 || f[0].Xid != 79 || !f[0].Fatal || !f[0].Time.Equal(time.Now()) {
			t.Fatalf("faults after a check: %+v", f)
		}
		select {
		case <-h.Changed():
		default:
			t.Fatal("no change signalled")
		}
		// The same fault seen again is not a new one.
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case <-h.Changed():
			t.Fatal("a fault seen twice signalled a change")
		default:
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("WatchHealth: %v", err)
		}
	})
	if err := (&FakeSource{Path: path}).WatchHealth(t.Context(), NewHealth(), 0, log); err == nil {
		t.Fatal("a zero interval was accepted")
	}
}

func FuzzDecodeFakeState(f *testing.F) {
	f.Add([]byte(`{"gpus":[{"index":0,"util":93,"mem_used":1024,"power_mw":250000},{"index":1,"faults":[{"xid":79},{"kind":"ecc_dbe"}]}]}`))
	f.Add([]byte(`{"gpus":[{"index":1024}]}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeFakeState(data)
		if err != nil {
			if !errors.Is(err, ErrFakeState) {
				t.Fatalf("error not ErrFakeState: %v", err)
			}
			return
		}
		seen := map[int]bool{}
		for _, g := range st.GPUs {
			if g.Index < 0 || g.Index > maxFakeIndex || seen[g.Index] || g.Util > 100 {
				t.Fatalf("accepted %+v", g)
			}
			seen[g.Index] = true
		}
		for _, x := range st.Faults(time.Unix(0, 0)) {
			if x.Reason == "" || len(x.Reason) > api.MaxGPUFaultReason || !seen[x.Index] {
				t.Fatalf("fault %+v", x)
			}
		}
	})
}
