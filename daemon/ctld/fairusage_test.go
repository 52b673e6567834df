package ctld

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/spool"
)

const fairShares = `
[[share]]
name = "own"
partition = "gpu"
gpus = 8
strategy = "LEND"
users = ["*"]

[[share]]
name = "x"
partition = "gpu"
gpus = 0
strategy = "LEND_AND_BORROW"
users = ["*"]

[[share]]
name = "y"
partition = "gpu"
gpus = 0
strategy = "LEND_AND_BORROW"
users = ["*"]
`

// fairUsage reads a share's decayed usage on the loop.
func (tc *testCluster) fairUsage(share string) float64 {
	tc.t.Helper()
	var u float64
	if err := tc.ctl.do(context.Background(), func() { u = tc.ctl.core.ShareFairUsage(share) }); err != nil {
		tc.t.Fatal(err)
	}
	return u
}

// storedUsage opens the stopped controller's spool and returns its usage
// record, decoded.
func storedUsage(t *testing.T, tc *testCluster) (sched.UsageState, bool) {
	t.Helper()
	sp, err := spool.Open(filepath.Join(tc.dir, "spool"), spool.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	b, err := sp.State(context.Background(), usageKey)
	if err != nil || b == nil {
		return sched.UsageState{}, false
	}
	st, err := decodeUsage(b)
	if err != nil {
		t.Fatalf("stored usage: %v", err)
	}
	return st, true
}

func shareUse(st sched.UsageState, share string) float64 {
	for _, s := range st.Shares {
		if s.Share == share {
			return s.Borrowed
		}
	}
	return 0
}

// TestDecodeUsage covers the stored usage record's decoder.
func TestDecodeUsage(t *testing.T) {
	good := `{"v":1,"at":"2030-01-01T00:00:00Z","shares":[{"share":"x","borrowed_gpu_s":12.5,"users":[{"user":"alice","gpu_s":3}]}]}`
	cases := []struct {
		name, data string
		ok         bool
	}{
		{"good", good, true},
		{"no shares", `{"v":1,"at":"2030-01-01T00:00:00Z","shares":[]}`, true},
		{"version 2", strings.Replace(good, `"v":1`, `"v":2`, 1), false},
		{"no version", `{"at":"2030-01-01T00:00:00Z"}`, false},
		{"unknown field", strings.Replace(good, `"v":1`, `"v":1,"x":1`, 1), false},
		{"negative usage", strings.Replace(good, `12.5`, `-1`, 1), false},
		{"huge usage", strings.Replace(good, `12.5`, `1e308`, 1), false},
		{"empty share", strings.Replace(good, `"share":"x"`, `"share":""`, 1), false},
		{"duplicate share", `{"v":1,"shares":[{"share":"x","borrowed_gpu_s":1},{"share":"x","borrowed_gpu_s":2}]}`, false},
		{"duplicate user", strings.Replace(good, `{"user":"alice","gpu_s":3}`, `{"user":"alice","gpu_s":3},{"user":"alice","gpu_s":1}`, 1), false},
		{"trailing data", good + `{}`, false},
		{"not json", `v=1`, false},
		{"too large", `{"v":1,"shares":[` + strings.Repeat(" ", spool.MaxRecordSize) + `]}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := decodeUsage([]byte(c.data))
			if (err == nil) != c.ok {
				t.Fatalf("decodeUsage: %v, want ok=%v", err, c.ok)
			}
			if c.name == "good" && (len(st.Shares) != 1 || st.Shares[0].Borrowed != 12.5 || st.Shares[0].Users[0].GPUSeconds != 3) {
				t.Fatalf("decoded %+v", st)
			}
		})
	}
	if _, err := decodeUsage([]byte(`{"v":1,"shares":[` + strings.Repeat(" ", spool.MaxRecordSize) + `]}`)); !errors.Is(err, spool.ErrTooLarge) {
		t.Errorf("oversized record: %v, want ErrTooLarge", err)
	}
}

// TestEncodeUsageBounded: usage too large for a spool value loses its
// per-user entries, and round-trips otherwise.
func TestEncodeUsageBounded(t *testing.T) {
	st := sched.UsageState{At: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), Shares: []sched.ShareUse{{Share: "x", Borrowed: 1}}}
	for i := 0; i < 40000; i++ {
		st.Shares[0].Users = append(st.Shares[0].Users, sched.UserUse{User: strings.Repeat("u", 20) + string(rune('a'+i%26)) + strings.Repeat("v", i%7) + strconv.Itoa(i), GPUSeconds: float64(i)})
	}
	b, err := encodeUsage(st)
	if err != nil || len(b) > spool.MaxRecordSize {
		t.Fatalf("encodeUsage: %d bytes, %v", len(b), err)
	}
	got, err := decodeUsage(b)
	if err != nil || len(got.Shares) != 1 || got.Shares[0].Borrowed != 1 || len(got.Shares[0].Users) != 0 {
		t.Fatalf("round trip of oversized usage: %+v %v", got.Shares, err)
	}
	st.Shares[0].Users = st.Shares[0].Users[:3]
	b, _ = encodeUsage(st)
	got, err = decodeUsage(b)
	if err != nil || !got.At.Equal(st.At) || len(got.Shares[0].Users) != 3 || got.Shares[0].Users[2] != st.Shares[0].Users[2] {
		t.Fatalf("round trip: %+v %v", got, err)
	}
}

// FuzzDecodeUsage: the stored usage decoder never panics, what it accepts
// the core takes, and it round-trips through encodeUsage.
func FuzzDecodeUsage(f *testing.F) {
	f.Add([]byte(`{"v":1,"at":"2030-01-01T00:00:00Z","shares":[{"share":"x","borrowed_gpu_s":12.5,"users":[{"user":"alice","gpu_s":3}]}]}`))
	f.Add([]byte(`{"v":1,"shares":[{"share":"x","borrowed_gpu_s":1e300}]}`))
	f.Add([]byte(`{"v":1,"shares":null}`))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte(`[]`))
	core, err := sched.New(sched.Config{Partitions: []sched.Partition{{Name: "p"}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeUsage(data)
		if err != nil {
			return
		}
		if err := core.Apply(sched.UsageRestored{State: st}); err != nil {
			t.Fatalf("the core refused decoded usage %+v: %v", st, err)
		}
		b, err := encodeUsage(st)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := decodeUsage(b)
		if err != nil || len(again.Shares) != len(st.Shares) {
			t.Fatalf("round trip: %+v %v", again, err)
		}
	})
}
