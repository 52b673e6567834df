package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEstimateWalltime: the walltime is the run time times a headroom in
// [1, 2), rounded up to the ladder (or to weeks above it). Cases whose run
// times leave one rung possible have one answer whatever the headroom;
// the others may land on either of two.
func TestEstimateWalltime(t *testing.T) {
	const h = time.Hour
	tests := []struct {
		name string
		run  time.Duration
		want []time.Duration // the possible walltimes
	}{
		{"a second", time.Second, []time.Duration{h}},
		{"ten minutes", 10 * time.Minute, []time.Duration{h}},
		{"half an hour", 30 * time.Minute, []time.Duration{h}},
		{"45 minutes", 45 * time.Minute, []time.Duration{h, 2 * h}},
		{"an hour", h, []time.Duration{2 * h}}, // any headroom above 0 passes 1h; u = 0 has probability 2^-53
		{"3 hours", 3 * h, []time.Duration{4 * h, 8 * h}},
		{"5 hours", 5 * h, []time.Duration{8 * h, 24 * h}},
		{"12 hours", 12 * h, []time.Duration{24 * h}},
		{"30 hours", 30 * h, []time.Duration{48 * h, 168 * h}},
		{"100 hours", 100 * h, []time.Duration{168 * h, 336 * h}},
		{"437 hours (the ITP trace's longest)", 437 * h, []time.Duration{504 * h, 672 * h, 840 * h, 1008 * h}},
		{"zero", 0, []time.Duration{0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for i := range 200 {
				id := "job" + strconv.Itoa(i)
				got := EstimateWalltime(id, tc.run, DefaultWalltimeSeed)
				if !slices.Contains(tc.want, got) {
					t.Fatalf("EstimateWalltime(%q, %v) = %v, want one of %v", id, tc.run, got, tc.want)
				}
				if tc.run > 0 && (got < tc.run || got > max(2*tc.run+168*h, 2*tc.run)) {
					t.Fatalf("walltime %v for a run of %v", got, tc.run)
				}
				if again := EstimateWalltime(id, tc.run, DefaultWalltimeSeed); again != got {
					t.Fatalf("not deterministic: %v then %v", got, again)
				}
				seen[got] = true
			}
			if len(tc.want) == 2 && len(seen) != 2 {
				t.Errorf("200 ids all got %v: the headroom does not vary", seen)
			}
		})
	}
}

// TestHeadroom: the per-job factor is spread uniformly over [0, 1) and
// depends on the seed.
func TestHeadroom(t *testing.T) {
	const n = 20000
	var sum float64
	var buckets [10]int
	differ := 0
	for i := range n {
		id := "j" + strconv.Itoa(i)
		u := headroom(id, 1)
		if u < 0 || u >= 1 {
			t.Fatalf("headroom(%q) = %v", id, u)
		}
		sum += u
		buckets[int(u*10)]++
		if headroom(id, 2) != u {
			differ++
		}
	}
	if mean := sum / n; mean < 0.49 || mean > 0.51 {
		t.Errorf("mean headroom %v, want about 0.5", mean)
	}
	for b, c := range buckets {
		if c < n/10*9/10 || c > n/10*11/10 {
			t.Errorf("decile %d has %d of %d", b, c, n)
		}
	}
	if differ < n*99/100 {
		t.Errorf("another seed changed only %d of %d", differ, n)
	}
}

// TestAddWalltimesITP: import-itp's model on the head of the ITP trace:
// every walltime is a rung of the ladder (or whole weeks) and at least the
// run time, most jobs ask for much more than they use (as real users do),
// and the trace with walltimes reads back the same.
func TestAddWalltimesITP(t *testing.T) {
	jobs, err := ReadITP(bytes.NewReader(itpHead(t, 3000)))
	if err != nil {
		t.Fatal(err)
	}
	AddWalltimes(jobs, DefaultWalltimeSeed)
	week := WalltimeLadder[len(WalltimeLadder)-1]
	var ratio []float64
	for _, j := range jobs {
		onLadder := slices.Contains(WalltimeLadder, j.Walltime) || (j.Walltime > week && j.Walltime%week == 0)
		if !onLadder || j.Walltime < j.Duration {
			t.Fatalf("job %s: run %v walltime %v", j.ID, j.Duration, j.Walltime)
		}
		ratio = append(ratio, float64(j.Duration)/float64(j.Walltime))
	}
	slices.Sort(ratio)
	if med := ratio[len(ratio)/2]; med > 0.5 {
		t.Errorf("median run/walltime %.2f: the model hardly overestimates", med)
	}
	back := roundTripTrace(t, jobs)
	for i := range back {
		if back[i].Walltime != jobs[i].Walltime {
			t.Fatalf("job %s: walltime %v read back as %v", jobs[i].ID, jobs[i].Walltime, back[i].Walltime)
		}
	}
}

// TestImportITPWalltime runs the import-itp command: walltime_s is filled
// by default, the seed changes it, and --no-walltime leaves it empty.
func TestImportITPWalltime(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.csv")
	if err := os.WriteFile(raw, itpHead(t, 200), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(args ...string) []TraceJob {
		out := filepath.Join(dir, "out.csv")
		argv := append([]string{"sharq-sim", "import-itp", raw, "-o", out}, args...)
		if err := newApp(&bytes.Buffer{}).Run(flagsFirst(argv)); err != nil {
			t.Fatal(err)
		}
		jobs, err := LoadTrace(out)
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	def, seeded, none := load(), load("--walltime-seed", "7"), load("--no-walltime")
	changed := 0
	for i := range def {
		if def[i].Walltime != EstimateWalltime(def[i].ID, def[i].Duration, DefaultWalltimeSeed) {
			t.Fatalf("job %s: walltime %v", def[i].ID, def[i].Walltime)
		}
		if seeded[i].Walltime != EstimateWalltime(def[i].ID, def[i].Duration, 7) {
			t.Fatalf("job %s: seed 7 gives %v", def[i].ID, seeded[i].Walltime)
		}
		if seeded[i].Walltime != def[i].Walltime {
			changed++
		}
		if none[i].Walltime != 0 {
			t.Fatalf("--no-walltime: job %s has %v", none[i].ID, none[i].Walltime)
		}
	}
	if changed == 0 {
		t.Error("another seed changed no walltime")
	}
}

// TestLoadTraceWalltimeError: a bad walltime_s is reported with the file
// and line.
func TestLoadTraceWalltimeError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(path, []byte("submit_s,job,share,priority,gpus,duration_s,walltime_s\n0,j1,a,1,1,10,20\n0,j2,a,1,1,10,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadTrace(path)
	if err == nil || !strings.Contains(err.Error(), path+": 1 bad row(s)\n  line 3: walltime_s: value out of range: 5 is below duration_s 10") {
		t.Errorf("err = %v", err)
	}
}
