package api

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSummaryRoundTrip(t *testing.T) {
	start := time.Unix(1700000000, 123456789)
	cases := []struct {
		name string
		job  Job
	}{
		{"pending", Job{ID: "1.lab", Name: "train", Owner: Owner{User: "alice"}, State: StateQueued, Share: "vision",
			Resources: Resources{Nodes: 1, GPUsPerNode: 4}, Reason: "QuotaExhausted"}},
		{"pending with an estimate", Job{ID: "4.lab", Name: "wide", Owner: Owner{User: "dana"}, State: StateQueued, Share: "vision",
			Resources: Resources{Nodes: 2, GPUsPerNode: 8}, Reason: "Resources",
			Estimated: &Estimated{StartTime: start.Add(time.Hour), Allocs: []Alloc{{Node: "g1", GPUs: []int{0}}}}}},
		{"running on two nodes", Job{ID: "2.lab", Name: "big", Owner: Owner{User: "bob"}, State: StateRunning, Share: "nlp",
			Used: 90 * time.Second, StartTime: start, Resources: Resources{Nodes: 2, GPUsPerNode: 8, MemPerNode: 64 << 30, Walltime: time.Hour},
			Allocs: []Alloc{{Node: "g1", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "g2", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}}},
		{"subjob with odd name", Job{ID: "3[7].lab", Name: "tab\there\nnew\\line", Owner: Owner{User: "c"}, State: StateFinished,
			Share: "a", StartTime: start, EndTime: start.Add(time.Minute), ArrayParent: "3[].lab", Allocs: []Alloc{{Node: "cpu1"}}}},
	}
	var b []byte
	var want []JobSummary
	for _, c := range cases {
		b = AppendSummary(b, &c.job)
		want = append(want, SummaryOf(&c.job))
	}
	got, err := ParseSummaries(string(b))
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		t.Run(cases[i].name, func(t *testing.T) {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got[i], want[i])
			}
		})
	}
}

func TestSummaryErrors(t *testing.T) {
	for _, in := range []string{"a\tb\n", strings.Repeat("x\t", 20) + "\n", "1\tn\tu\tQ\tq\tNaN\t\t\t1\t1\t0\t0\t\t\t\n"} {
		if _, err := ParseSummaries(in); !errors.Is(err, ErrSummary) {
			t.Errorf("%q: err %v", in, err)
		}
	}
}

func FuzzParseSummaries(f *testing.F) {
	f.Add(string(AppendSummary(nil, &Job{ID: "1.x", State: StateRunning, Allocs: []Alloc{{Node: "n", GPUs: []int{1}}}})))
	f.Fuzz(func(t *testing.T, s string) {
		jobs, err := ParseSummaries(s)
		if err != nil {
			return
		}
		var b []byte
		for _, js := range jobs {
			b = AppendSummary(b, &Job{ID: js.ID, Name: js.Name, Owner: Owner{User: js.User}, State: js.State,
				Share: js.Share, Used: js.Used, StartTime: js.StartTime, EndTime: js.EndTime,
				Resources: Resources{Nodes: js.Nodes, GPUsPerNode: js.GPUsPerNode, MemPerNode: js.MemPerNode, Walltime: js.Walltime},
				Reason:    js.Reason, Allocs: js.Allocs, ArrayParent: js.ArrayParent, Estimated: estimated(js.EstStart)})
		}
		again, err := ParseSummaries(string(b))
		if err != nil || !reflect.DeepEqual(jobs, again) {
			t.Fatalf("re-encoding %q: %v", s, err)
		}
	})
}

func estimated(t time.Time) *Estimated {
	if t.IsZero() {
		return nil
	}
	return &Estimated{StartTime: t}
}
