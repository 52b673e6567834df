package ctld

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
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

// TestFairUsageSurvivesRestartAndReload: the decayed usage a borrower built
// up is in the spool after a stop, back in the core after a restart, taken
// from the spool alone after a crash (what the periodic save left), and
// kept across reloads that rename or remove the share.
func TestFairUsageSurvivesRestartAndReload(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, fairShares)
	n := tc.attachNode("n1")
	id := tc.submit("x", 4, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != id {
		t.Fatalf("start %+v", st)
	}
	n.report(id, 0, "running", 0)
	time.Sleep(1200 * time.Millisecond) // the loop's tick passes: usage accrues
	n.report(id, 0, "exited", 0)
	n.expect(api.MsgRemove)
	tc.waitState(id, api.StateFinished)
	before := tc.fairUsage("x")
	// 4 GPUs for at least a second; the 7 day half-life takes nothing.
	if before < 4 || before > 4*60 {
		t.Fatalf("usage of x after 4 GPUs for about a second: %v GPU-s", before)
	}
	if u := tc.fairUsage("y"); u != 0 {
		t.Fatalf("usage of y, which borrowed nothing: %v", u)
	}
	for _, s := range tc.call(api.Request{Op: api.OpShares}).Shares {
		if s.Name == "x" && math.Abs(s.FairUsage*3600-before) > 1e-6*before {
			t.Fatalf("qstat -Q: x's fair usage %v GPU-h, want %v GPU-s", s.FairUsage, before)
		}
	}

	// A stop saves it; the restarted core has it back.
	tc.stop()
	st, ok := storedUsage(t, tc)
	if !ok || math.Abs(shareUse(st, "x")-before) > 1e-6*before {
		t.Fatalf("usage in the spool after a stop: %+v, want x = %v", st, before)
	}
	tc.start()
	if got := tc.fairUsage("x"); math.Abs(got-before) > 1e-3*before {
		t.Fatalf("usage of x after a restart: %v, want %v", got, before)
	}

	// A crash leaves what the last periodic save wrote: the next start
	// takes it from the spool alone.
	tc.stop()
	sp, err := spool.Open(filepath.Join(tc.dir, "spool"), spool.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeUsage(sched.UsageState{At: time.Now(), Shares: []sched.ShareUse{{Share: "x", Borrowed: 5000},
		{Share: "y", Borrowed: 70, Users: []sched.UserUse{{User: "alice", GPUSeconds: 70}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.SetState(context.Background(), usageKey, b); err != nil {
		t.Fatal(err)
	}
	sp.Close()
	tc.start()
	if x, y := tc.fairUsage("x"), tc.fairUsage("y"); math.Abs(x-5000) > 1 || math.Abs(y-70) > 0.1 {
		t.Fatalf("usage after a crash: x %v y %v, want 5000 and 70", x, y)
	}

	// A reload renaming x and removing y keeps their usage under their
	// names (it decays there); the new name starts from none. Renaming
	// back finds it again.
	orig, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(orig), `name = "x"`, `name = "x2"`, 1)
	renamed = renamed[:strings.LastIndex(renamed, "[[share]]")]
	reload := func(text string) {
		t.Helper()
		if err := os.WriteFile(tc.conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
			t.Fatalf("reload: %v", resp.Error)
		}
	}
	reload(renamed + "\n[scheduler]\nfair_share = false\n")
	if x, x2 := tc.fairUsage("x"), tc.fairUsage("x2"); math.Abs(x-5000) > 1 || x2 != 0 {
		t.Fatalf("after renaming x to x2: x %v x2 %v", x, x2)
	}
	n = tc.attachNode("n1")
	id2 := tc.submit("x2", 2, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != id2 {
		t.Fatalf("start in the renamed share: %+v", st)
	}
	reload(string(orig))
	if x, y := tc.fairUsage("x"), tc.fairUsage("y"); math.Abs(x-5000) > 1 || math.Abs(y-70) > 0.1 {
		t.Fatalf("after renaming back: x %v y %v", x, y)
	}
	if j := tc.job(id2); j.State != api.StateRunning {
		t.Fatalf("the renamed share's job after the reload: %s", j.State)
	}
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
