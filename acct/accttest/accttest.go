package accttest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"
)

// Factory makes stores for Run.
type Factory struct {
	// Open returns a new, empty store. Run closes it.
	Open func(t *testing.T) acct.Store
	// Reopen closes old and opens the same database again.
	Reopen func(t *testing.T, old acct.Store) acct.Store
}

// Run runs the conformance suite as subtests of t.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s acct.Store)
	}{
		{"RoundTrip", roundTrip},
		{"DetailRoundTrip", detailRoundTrip},
		{"RecordReplaces", recordReplaces},
		{"InvalidBatchIsAtomic", invalidBatchIsAtomic},
		{"Filters", filters},
		{"UsageMatchesRecords", usageMatchesRecords},
		{"UsageFromSamples", usageFromSamples},
		{"Samples", samples},
		{"Purge", purge},
		{"ContextCanceled", contextCanceled},
		{"Concurrent", concurrent},
		{"Closed", closed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := f.Open(t)
			defer s.Close()
			tc.fn(t, s)
		})
	}
	if f.Reopen != nil {
		t.Run("Reopen", func(t *testing.T) {
			s := f.Open(t)
			recs := genRecords(rand.New(rand.NewPCG(7, 7)), 50)
			if err := s.Record(ctx, recs...); err != nil {
				t.Fatal(err)
			}
			s = f.Reopen(t, s)
			defer s.Close()
			got := mustJobs(t, s, acct.JobFilter{Limit: 100})
			if len(got) != len(recs) {
				t.Fatalf("after reopen: %d records, want %d", len(got), len(recs))
			}
		})
	}
}

var (
	ctx  = context.Background()
	base = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
)

func intp(v int) *int { return &v }

// full is a record with every field set.
func full(id string) acct.Record {
	return acct.Record{
		ID: id, Seq: 12, Name: "train", User: "alice", UID: 1001, GID: 100, Share: "vision", Partition: "gpu",
		Nodes: 2, GPUsPerNode: 4, CPUsPerNode: 16, MemPerNode: 64 << 30, Walltime: 2 * time.Hour,
		Allocs: []acct.Alloc{{Node: "gpu01", GPUs: []int{0, 1, 2, 3}}, {Node: "gpu02", GPUs: []int{4, 5, 6, 7}}},
		Submit: base, Eligible: base.Add(time.Second), Start: base.Add(time.Minute), End: base.Add(time.Hour),
		Used: 59 * time.Minute, Runs: 2, Preemptions: 1, ExitStatus: intp(0), Outcome: acct.Completed, Reason: "",
		OwnedGPUSeconds: 8 * 3000, BorrowedGPUSeconds: 8 * 540, LostGPUSeconds: 8 * 600, GraceGPUSeconds: 8 * 30,
		GPUMeanUtil: 37.5, GPUPeakMem: 300 << 30, SampledGPUSeconds: 8 * 3540, IdleGPUSeconds: 8 * 354, UtilGPUSeconds: 8 * 1327.5,
	}
}

func mustJobs(t *testing.T, s acct.Store, f acct.JobFilter) []acct.Record {
	t.Helper()
	got, err := s.Jobs(ctx, f)
	if err != nil {
		t.Fatalf("Jobs(%+v): %v", f, err)
	}
	return got
}

func roundTrip(t *testing.T, s acct.Store) {
	cases := []struct {
		name string
		rec  acct.Record
	}{
		{"full", full("12.lab")},
		{"no exit status", func() acct.Record {
			r := full("13.lab")
			r.ExitStatus, r.Outcome, r.Reason = nil, acct.Deleted, "Deleted"
			r.Start, r.Allocs, r.Runs = time.Time{}, nil, 0
			return r
		}()},
		{"subjob", func() acct.Record {
			r := full("14[3].lab")
			r.ArrayParent, r.ArrayIndex, r.ExitStatus, r.Outcome = "14[].lab", 3, intp(271), acct.Failed
			return r
		}()},
		{"array parent", func() acct.Record {
			r := full("14[].lab")
			r.ArrayIndices, r.OwnedGPUSeconds, r.BorrowedGPUSeconds = "0-99:2", 0, 0
			return r
		}()},
		{"cpu only node", func() acct.Record {
			r := full("15.lab")
			r.GPUsPerNode, r.Allocs = 0, []acct.Alloc{{Node: "cpu01"}}
			return r
		}()},
		{"unicode name", func() acct.Record { r := full("16.lab"); r.Name = "训练 ✓ 'quoted'"; return r }()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Record(ctx, tc.rec); err != nil {
				t.Fatal(err)
			}
			got := mustJobs(t, s, acct.JobFilter{ID: tc.rec.ID})
			var want []acct.Record
			want = append(want, tc.rec)
			if tc.rec.ID == "14[].lab" { // an array parent's id matches its subjobs too
				want = mustJobs(t, s, acct.JobFilter{ID: "14[].lab"})
				if len(want) != 2 {
					t.Fatalf("array parent and subjob: got %d records", len(want))
				}
				got = got[:0]
				for _, r := range want {
					if r.ID == tc.rec.ID {
						got = append(got, r)
					}
				}
				want = want[:0]
				want = append(want, tc.rec)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], want[0]) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// detailed is full(id) with every field of its Detail set.
func detailed(id string) acct.Record {
	r := full(id)
	r.Detail = acct.Detail{
		Script: "#!/bin/bash\n#PBS -N train\npython train.py --lr 0.1 # 'quoted' \"x\" 训练\n", Shell: "/bin/bash",
		Command: []string{"python", "it's"}, Env: map[string]string{"TOKEN": "s3cret", "PBS_O_WORKDIR": "/home/alice", "E": ""},
		Deps:    []acct.Dep{{Type: "afterok", On: "10.lab"}, {Type: "afterany", On: "11[].lab"}},
		Events:  []acct.Event{{Time: base, State: "Q", What: "submitted"}, {Time: base.Add(time.Minute + time.Millisecond), State: "R", What: "started on gpu01 [0 1]"}},
		WorkDir: "/home/alice", Stdout: "/home/alice/train.o12", Stderr: "/home/alice/train.e12", Join: "oe", Umask: "077",
		Image: "pytorch:24.05", Grace: 5 * time.Minute, NotBefore: base.Add(-time.Hour), Interactive: true,
		Priority: 20, PBSPriority: -5, ArrayMax: 4, Labels: map[string]string{"gpu_type": "a100"}, Exclusive: true,
		MPIProcs: 2, OMPThreads: 8, NodeFailures: 1,
	}
	return r
}

// detailRoundTrip: a record's Detail reads back whole with
// JobFilter.Detail and is left out without it.
func detailRoundTrip(t *testing.T, s acct.Store) {
	r := detailed("20.lab")
	plain := full("21.lab")
	if err := s.Record(ctx, r, plain); err != nil {
		t.Fatal(err)
	}
	got := mustJobs(t, s, acct.JobFilter{ID: r.ID, Detail: true})
	if len(got) != 1 || !reflect.DeepEqual(got[0], r) {
		t.Fatalf("round trip with detail:\n got %+v\nwant %+v", got, r)
	}
	got = mustJobs(t, s, acct.JobFilter{ID: r.ID})
	if len(got) != 1 || !reflect.DeepEqual(got[0].Detail, acct.Detail{}) {
		t.Fatalf("without Detail the detail was read: %+v", got)
	}
	got = mustJobs(t, s, acct.JobFilter{ID: plain.ID, Detail: true})
	if len(got) != 1 || !reflect.DeepEqual(got[0], plain) {
		t.Fatalf("record without detail:\n got %+v\nwant %+v", got, plain)
	}
	// At the bounds.
	big := detailed("22.lab")
	big.Detail.Events = make([]acct.Event, acct.MaxEvents)
	for i := range big.Detail.Events {
		big.Detail.Events[i] = acct.Event{Time: base.Add(time.Duration(i) * time.Second), State: "R", What: "x"}
	}
	big.Detail.Script = strings.Repeat("z", acct.MaxDetailLen-(big.Detail.Len()-len(big.Detail.Script)))
	if err := s.Record(ctx, big); err != nil {
		t.Fatalf("a detail of MaxDetailLen bytes: %v", err)
	}
	got = mustJobs(t, s, acct.JobFilter{ID: big.ID, Detail: true})
	if len(got) != 1 || !reflect.DeepEqual(got[0], big) {
		t.Fatalf("a detail at the bounds did not round-trip")
	}
}

func recordReplaces(t *testing.T, s acct.Store) {
	r := full("1.lab")
	if err := s.Record(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Name, r.OwnedGPUSeconds = "again", 1
	if err := s.Record(ctx, r, r); err != nil {
		t.Fatal(err)
	}
	got := mustJobs(t, s, acct.JobFilter{})
	if len(got) != 1 || got[0].Name != "again" || got[0].OwnedGPUSeconds != 1 {
		t.Fatalf("after re-recording: %+v", got)
	}
}

func invalidBatchIsAtomic(t *testing.T, s acct.Store) {
	bad := []struct {
		name string
		mod  func(*acct.Record)
	}{
		{"empty id", func(r *acct.Record) { r.ID = "" }},
		{"long id", func(r *acct.Record) { r.ID = string(make([]byte, acct.MaxIDLen+1)) }},
		{"no end", func(r *acct.Record) { r.End = time.Time{} }},
		{"bad outcome", func(r *acct.Record) { r.Outcome = "weird" }},
		{"node with colon", func(r *acct.Record) { r.Allocs = []acct.Alloc{{Node: "a:b"}} }},
		{"negative gpu", func(r *acct.Record) { r.Allocs = []acct.Alloc{{Node: "a", GPUs: []int{-1}}} }},
		{"long name", func(r *acct.Record) { r.Name = string(make([]byte, acct.MaxNameLen+1)) }},
		{"long script", func(r *acct.Record) { r.Detail.Script = strings.Repeat("x", acct.MaxDetailLen+1) }},
		{"long detail", func(r *acct.Record) {
			r.Detail.Script = strings.Repeat("x", acct.MaxDetailLen/2)
			r.Detail.Env = map[string]string{"A": strings.Repeat("y", acct.MaxDetailLen/2)}
		}},
		{"script with NUL", func(r *acct.Record) { r.Detail.Script = "echo \x00" }},
		{"script not UTF-8", func(r *acct.Record) { r.Detail.Script = "echo \xff" }},
		{"too many events", func(r *acct.Record) { r.Detail.Events = make([]acct.Event, acct.MaxEvents+1) }},
		{"too many deps", func(r *acct.Record) { r.Detail.Deps = make([]acct.Dep, acct.MaxDeps+1) }},
		{"too many variables", func(r *acct.Record) {
			r.Detail.Env = map[string]string{}
			for i := range acct.MaxEnvVars + 1 {
				r.Detail.Env[strconv.Itoa(i)] = ""
			}
		}},
		{"gpu util over 100", func(r *acct.Record) { r.GPUMeanUtil = 101 }},
		{"gpu util NaN", func(r *acct.Record) { r.GPUMeanUtil = math.NaN() }},
		{"negative peak memory", func(r *acct.Record) { r.GPUPeakMem = -1 }},
		{"idle beyond sampled", func(r *acct.Record) { r.IdleGPUSeconds = r.SampledGPUSeconds + 1 }},
		{"infinite sampled", func(r *acct.Record) { r.SampledGPUSeconds = math.Inf(1) }},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := full("2.lab")
			tc.mod(&r)
			err := s.Record(ctx, full("1.lab"), r)
			if !errors.Is(err, acct.ErrInvalid) {
				t.Fatalf("Record: %v, want ErrInvalid", err)
			}
			if got := mustJobs(t, s, acct.JobFilter{}); len(got) != 0 {
				t.Fatalf("a refused batch stored %d records", len(got))
			}
		})
	}
	badFilters := []acct.JobFilter{{Limit: -1}, {Limit: acct.MaxLimit + 1}, {Outcome: "nope"},
		{Start: base.Add(time.Hour), End: base}}
	for _, f := range badFilters {
		if _, err := s.Jobs(ctx, f); !errors.Is(err, acct.ErrInvalid) {
			t.Errorf("Jobs(%+v): %v, want ErrInvalid", f, err)
		}
	}
	badUsage := []acct.UsageQuery{{By: "user"}, {By: "team", Start: base, End: base.Add(time.Hour)},
		{By: acct.ByUser, Start: base.Add(time.Hour), End: base}}
	for _, q := range badUsage {
		if _, err := s.Usage(ctx, q); !errors.Is(err, acct.ErrInvalid) {
			t.Errorf("Usage(%+v): %v, want ErrInvalid", q, err)
		}
	}
	if err := s.Sample(ctx, acct.ShareSample{Share: "a", Time: base, Seconds: 0}); !errors.Is(err, acct.ErrInvalid) {
		t.Errorf("Sample with no interval: %v", err)
	}
}

var (
	users  = []string{"alice", "bob", "carol", "dave"}
	shares = []string{"vision", "nlp", "infra"}
	parts  = map[string]string{"vision": "gpu", "nlp": "gpu", "infra": "cpu"}
)

// genRecords makes n records with random owners, times and usage.
func genRecords(rng *rand.Rand, n int) []acct.Record {
	recs := make([]acct.Record, n)
	for i := range recs {
		sh := shares[rng.IntN(len(shares))]
		r := acct.Record{
			ID: fmt.Sprintf("%d.lab", i+1), Seq: uint64(i + 1), Name: "job", User: users[rng.IntN(len(users))],
			UID: 1000, GID: 1000, Share: sh, Partition: parts[sh], Nodes: 1, GPUsPerNode: 1 + rng.IntN(8),
			Submit: base.Add(time.Duration(i) * time.Minute),
		}
		r.Start = r.Submit.Add(time.Duration(rng.IntN(600)) * time.Second)
		r.End = r.Start.Add(time.Duration(1+rng.IntN(7200)) * time.Second)
		r.Used = r.End.Sub(r.Start)
		gs := float64(r.GPUs()) * r.Used.Seconds()
		b := rng.Float64()
		r.OwnedGPUSeconds, r.BorrowedGPUSeconds = gs*(1-b), gs*b
		r.Preemptions = rng.IntN(3)
		if r.Preemptions > 0 {
			r.LostGPUSeconds, r.GraceGPUSeconds = gs*0.1, gs*0.01
		}
		switch rng.IntN(3) {
		case 0:
			r.Outcome, r.ExitStatus = acct.Completed, intp(0)
		case 1:
			r.Outcome, r.ExitStatus = acct.Failed, intp(1)
		default:
			r.Outcome, r.Reason = acct.Deleted, "Deleted"
		}
		r.Allocs = []acct.Alloc{{Node: fmt.Sprintf("gpu%02d", rng.IntN(16)), GPUs: []int{0}}}
		if rng.IntN(3) > 0 { // its GPUs were sampled
			r.GPUMeanUtil, r.GPUPeakMem = 100*rng.Float64(), rng.Int64N(80<<30)
			r.SampledGPUSeconds, r.IdleGPUSeconds = gs, gs*rng.Float64()
			r.UtilGPUSeconds = gs * r.GPUMeanUtil / 100
		}
		recs[i] = r
	}
	return recs
}

func filters(t *testing.T, s acct.Store) {
	recs := genRecords(rand.New(rand.NewPCG(1, 2)), 300)
	if err := s.Record(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	mid := recs[150].End
	cases := []struct {
		name string
		f    acct.JobFilter
		keep func(acct.Record) bool
	}{
		{"all", acct.JobFilter{Limit: 1000}, func(acct.Record) bool { return true }},
		{"id", acct.JobFilter{ID: "17.lab"}, func(r acct.Record) bool { return r.ID == "17.lab" }},
		{"unknown id", acct.JobFilter{ID: "9999.lab"}, func(acct.Record) bool { return false }},
		{"user", acct.JobFilter{User: "bob", Limit: 1000}, func(r acct.Record) bool { return r.User == "bob" }},
		{"share", acct.JobFilter{Share: "nlp", Limit: 1000}, func(r acct.Record) bool { return r.Share == "nlp" }},
		{"outcome", acct.JobFilter{Outcome: acct.Failed, Limit: 1000}, func(r acct.Record) bool { return r.Outcome == acct.Failed }},
		{"start", acct.JobFilter{Start: mid, Limit: 1000}, func(r acct.Record) bool { return !r.End.Before(mid) }},
		{"end", acct.JobFilter{End: mid, Limit: 1000}, func(r acct.Record) bool { return r.End.Before(mid) }},
		{"user and share and range", acct.JobFilter{User: "alice", Share: "vision", Start: recs[50].End, End: mid, Limit: 1000},
			func(r acct.Record) bool {
				return r.User == "alice" && r.Share == "vision" && !r.End.Before(recs[50].End) && r.End.Before(mid)
			}},
		{"quote in user", acct.JobFilter{User: "a' OR '1'='1"}, func(acct.Record) bool { return false }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for _, r := range sortByEnd(recs) {
				if tc.keep(r) {
					want = append(want, r.ID)
				}
			}
			var gotIDs []string
			for _, r := range mustJobs(t, s, tc.f) {
				gotIDs = append(gotIDs, r.ID)
			}
			if !reflect.DeepEqual(gotIDs, want) {
				t.Fatalf("got %d ids %v\nwant %d %v", len(gotIDs), gotIDs, len(want), want)
			}
		})
	}
	t.Run("limit", func(t *testing.T) {
		got := mustJobs(t, s, acct.JobFilter{Limit: 7})
		want := sortByEnd(recs)[:7]
		for i := range got {
			if got[i].ID != want[i].ID {
				t.Fatalf("limit 7: %d is %s, want %s", i, got[i].ID, want[i].ID)
			}
		}
		if len(got) != 7 {
			t.Fatalf("limit 7: %d records", len(got))
		}
	})
	t.Run("newest", func(t *testing.T) {
		all := sortByEnd(recs)
		got := mustJobs(t, s, acct.JobFilter{Limit: 7, Newest: true, User: "alice"})
		var want []string
		for i := len(all) - 1; i >= 0 && len(want) < 7; i-- {
			if all[i].User == "alice" {
				want = append(want, all[i].ID)
			}
		}
		var gotIDs []string
		for _, r := range got {
			gotIDs = append(gotIDs, r.ID)
		}
		if len(want) == 0 || !reflect.DeepEqual(gotIDs, want) {
			t.Fatalf("newest 7 of alice: %v, want %v", gotIDs, want)
		}
	})
}

func sortByEnd(recs []acct.Record) []acct.Record {
	out := append([]acct.Record(nil), recs...)
	sort.SliceStable(out, func(i, k int) bool {
		if !out[i].End.Equal(out[k].End) {
			return out[i].End.Before(out[k].End)
		}
		return out[i].Seq < out[k].Seq
	})
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func usageMatchesRecords(t *testing.T, s acct.Store) {
	rng := rand.New(rand.NewPCG(3, 4))
	recs := genRecords(rng, 400)
	if err := s.Record(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	// Recording a job again (a replay after a crash, or a correction)
	// replaces its part of the sums.
	for i := 0; i < len(recs); i += 7 {
		recs[i].User, recs[i].OwnedGPUSeconds = users[(i/7)%len(users)], recs[i].OwnedGPUSeconds+100
		recs[i].End = recs[i].End.Add(time.Duration(rng.IntN(3)) * time.Hour)
		if err := s.Record(ctx, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	periods := []struct {
		name       string
		start, end time.Time
	}{
		{"unaligned", recs[40].End, recs[350].End},
		{"whole hours", recs[40].End.Truncate(time.Hour), recs[350].End.Truncate(time.Hour)},
		{"within an hour", recs[100].End.Truncate(time.Hour).Add(5 * time.Minute), recs[100].End.Truncate(time.Hour).Add(50 * time.Minute)},
		{"everything", base.Add(-time.Hour), base.Add(1000 * time.Hour)},
	}
	for _, p := range periods {
		start, end := p.start, p.end
		for _, by := range []acct.By{acct.ByUser, acct.ByShare, acct.ByPartition} {
			for _, user := range []string{"", "carol"} {
				t.Run(p.name+"/"+string(by)+"/"+user, func(t *testing.T) {
					want := map[string]*acct.UsageRow{}
					for _, r := range recs {
						if r.End.Before(start) || !r.End.Before(end) || (user != "" && r.User != user) {
							continue
						}
						key := map[acct.By]string{acct.ByUser: r.User, acct.ByShare: r.Share, acct.ByPartition: r.Partition}[by]
						w := want[key]
						if w == nil {
							w = &acct.UsageRow{Key: key}
							want[key] = w
						}
						w.Jobs++
						w.Owned += r.OwnedGPUSeconds / 3600
						w.Borrowed += r.BorrowedGPUSeconds / 3600
						w.Lost += r.LostGPUSeconds / 3600
						w.Grace += r.GraceGPUSeconds / 3600
						w.Preemptions += r.Preemptions
						w.Sampled += r.SampledGPUSeconds / 3600
						w.Idle += r.IdleGPUSeconds / 3600
						w.Efficiency += r.UtilGPUSeconds / 3600 // divided below
					}
					for _, w := range want {
						if w.Sampled > 0 {
							w.Efficiency /= w.Sampled
						}
					}
					got, err := s.Usage(ctx, acct.UsageQuery{Start: start, End: end, By: by, User: user})
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(want) {
						t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
					}
					for i, g := range got {
						if i > 0 && got[i-1].Key >= g.Key {
							t.Fatalf("rows not ordered by key: %q then %q", got[i-1].Key, g.Key)
						}
						w := want[g.Key]
						if w == nil || g.Jobs != w.Jobs || g.Preemptions != w.Preemptions || !near(g.Owned, w.Owned) ||
							!near(g.Borrowed, w.Borrowed) || !near(g.Lost, w.Lost) || !near(g.Grace, w.Grace) ||
							!near(g.Sampled, w.Sampled) || !near(g.Idle, w.Idle) || !near(g.Efficiency, w.Efficiency) {
							t.Fatalf("row %q:\n got %+v\nwant %+v", g.Key, g, w)
						}
					}
				})
			}
		}
	}
	t.Run("array parents are not counted", func(t *testing.T) {
		p := full("900[].lab")
		p.ArrayIndices, p.End, p.OwnedGPUSeconds, p.BorrowedGPUSeconds, p.LostGPUSeconds, p.GraceGPUSeconds, p.Preemptions =
			"0-3", base.Add(-time.Hour), 0, 0, 0, 0, 0
		if err := s.Record(ctx, p); err != nil {
			t.Fatal(err)
		}
		got, err := s.Usage(ctx, acct.UsageQuery{Start: base.Add(-2 * time.Hour), End: base, By: acct.ByUser})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Jobs != 0 {
			t.Fatalf("array parent only: %+v", got)
		}
	})
}

// genSamples makes a minute of samples per share over n minutes.
func genSamples(rng *rand.Rand, n int) []acct.ShareSample {
	var out []acct.ShareSample
	for i := range n {
		for _, sh := range shares {
			q := map[string]int{"vision": 4, "nlp": 3, "infra": 1}[sh]
			use := rng.IntN(9)
			out = append(out, acct.ShareSample{Time: base.Add(time.Duration(i+1) * time.Minute), Seconds: 60, Share: sh,
				Partition: parts[sh], PartitionGPUs: map[string]int{"gpu": 8, "cpu": 2}[parts[sh]], Quota: q, InUse: use,
				Borrowed: max(0, use-q), Lent: rng.IntN(q + 1)})
		}
	}
	return out
}

func usageFromSamples(t *testing.T, s acct.Store) {
	xs := genSamples(rand.New(rand.NewPCG(5, 6)), 120)
	if err := s.Sample(ctx, xs...); err != nil {
		t.Fatal(err)
	}
	start, end := base.Add(10*time.Minute), base.Add(100*time.Minute)
	type agg struct{ lent, quota, use float64 }
	for _, by := range []acct.By{acct.ByShare, acct.ByPartition} {
		t.Run(string(by), func(t *testing.T) {
			want := map[string]*agg{}
			capSeen := map[string]bool{}
			for _, x := range xs {
				if x.Time.Before(start) || !x.Time.Before(end) {
					continue
				}
				key := x.Share
				if by == acct.ByPartition {
					key = x.Partition
				}
				a := want[key]
				if a == nil {
					a = &agg{}
					want[key] = a
				}
				a.lent += float64(x.Lent) * x.Seconds / 3600
				a.use += float64(x.InUse) * x.Seconds / 3600
				if by == acct.ByShare {
					a.quota += float64(x.Quota) * x.Seconds / 3600
				} else if k := fmt.Sprint(key, x.Time); !capSeen[k] {
					capSeen[k] = true
					a.quota += float64(x.PartitionGPUs) * x.Seconds / 3600
				}
			}
			got, err := s.Usage(ctx, acct.UsageQuery{Start: start, End: end, By: by})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for _, g := range got {
				w := want[g.Key]
				if w == nil || !near(g.Lent, w.lent) || !near(g.Quota, w.quota) || !near(g.InUse, w.use) ||
					!near(g.Utilization, w.use/w.quota) {
					t.Fatalf("row %q: got %+v want %+v", g.Key, g, w)
				}
			}
		})
	}
	t.Run("by user has no sample columns", func(t *testing.T) {
		got, err := s.Usage(ctx, acct.UsageQuery{Start: start, End: end, By: acct.ByUser})
		if err != nil || len(got) != 0 {
			t.Fatalf("by user without jobs: %+v, %v", got, err)
		}
	})
}

func samples(t *testing.T, s acct.Store) {
	xs := genSamples(rand.New(rand.NewPCG(8, 9)), 30)
	if err := s.Sample(ctx, xs...); err != nil {
		t.Fatal(err)
	}
	// Sampling the same time again replaces.
	again := xs[0]
	again.InUse = 7
	if err := s.Sample(ctx, again); err != nil {
		t.Fatal(err)
	}
	xs[0] = again
	got, err := s.Samples(ctx, base, base.Add(time.Hour), 10000)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]acct.ShareSample(nil), xs...)
	sort.SliceStable(want, func(i, k int) bool {
		if !want[i].Time.Equal(want[k].Time) {
			return want[i].Time.Before(want[k].Time)
		}
		return want[i].Share < want[k].Share
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("samples differ: got %d, want %d\n%+v\n%+v", len(got), len(want), got[:3], want[:3])
	}
	if got, _ := s.Samples(ctx, base, base.Add(time.Hour), 5); len(got) != 5 {
		t.Fatalf("limit 5: %d samples", len(got))
	}
	if _, err := s.Samples(ctx, base, base.Add(time.Hour), 0); !errors.Is(err, acct.ErrInvalid) {
		t.Fatalf("limit 0: %v", err)
	}
}

func purge(t *testing.T, s acct.Store) {
	recs := genRecords(rand.New(rand.NewPCG(10, 11)), 100)
	if err := s.Record(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	if err := s.Sample(ctx, genSamples(rand.New(rand.NewPCG(1, 1)), 60)...); err != nil {
		t.Fatal(err)
	}
	// Purge keeps whole hours: a cut inside an hour keeps that hour.
	cut := recs[60].End.Truncate(time.Hour)
	if _, err := s.Purge(ctx, cut.Add(59*time.Minute)); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, r := range recs {
		if r.End.Before(cut) {
			want++
		}
	}
	n, err := s.Purge(ctx, cut)
	if err != nil || n != 0 {
		t.Fatalf("second Purge at the same hour: %d, %v", n, err)
	}
	if got := int64(len(recs) - len(mustJobs(t, s, acct.JobFilter{Limit: 1000}))); got != want {
		t.Fatalf("Purge dropped %d, want %d", got, want)
	}
	for _, r := range mustJobs(t, s, acct.JobFilter{Limit: 1000}) {
		if r.End.Before(cut) {
			t.Fatalf("job %s ended %v, before the cut %v, is still there", r.ID, r.End, cut)
		}
	}
	// The usage of what is left is what is left.
	var owned float64
	for _, r := range recs {
		if !r.End.Before(cut) {
			owned += r.OwnedGPUSeconds / 3600
		}
	}
	u, err := s.Usage(ctx, acct.UsageQuery{Start: base.Add(-time.Hour), End: base.Add(1000 * time.Hour), By: acct.ByPartition})
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, r := range u {
		got += r.Owned
	}
	if !near(got, owned) {
		t.Fatalf("owned GPU-hours after purge %v, want %v", got, owned)
	}
	xs, err := s.Samples(ctx, time.Time{}, base.Add(24*time.Hour), 10000)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		if x.Time.Before(cut) {
			t.Fatalf("sample at %v survived the purge at %v", x.Time, cut)
		}
	}
}

func contextCanceled(t *testing.T, s acct.Store) {
	c, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Record(c, full("1.lab")); err == nil {
		t.Fatal("Record with a canceled context succeeded")
	}
	if _, err := s.Jobs(c, acct.JobFilter{}); err == nil {
		t.Fatal("Jobs with a canceled context succeeded")
	}
	if got := mustJobs(t, s, acct.JobFilter{}); len(got) != 0 {
		t.Fatalf("a canceled Record stored %d records", len(got))
	}
}

func concurrent(t *testing.T, s acct.Store) {
	recs := genRecords(rand.New(rand.NewPCG(12, 13)), 200)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += 4 {
				if err := s.Record(ctx, recs[i]); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := s.Usage(ctx, acct.UsageQuery{Start: base, End: base.Add(1000 * time.Hour), By: acct.ByUser}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := mustJobs(t, s, acct.JobFilter{Limit: 1000}); len(got) != len(recs) {
		t.Fatalf("%d records after concurrent writes, want %d", len(got), len(recs))
	}
}

func closed(t *testing.T, s acct.Store) {
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, full("1.lab")); !errors.Is(err, acct.ErrClosed) {
		t.Fatalf("Record after Close: %v", err)
	}
	if _, err := s.Jobs(ctx, acct.JobFilter{}); !errors.Is(err, acct.ErrClosed) {
		t.Fatalf("Jobs after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
