package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestEventQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q eventQueue
	var all []event
	for i := range 2000 {
		e := event{t: time.Duration(rng.IntN(50)), kind: evKind(rng.IntN(3)), job: int32(i)}
		q.push(e)
		e.seq = uint64(i)
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b event) int {
		if a.less(&b) {
			return -1
		}
		if b.less(&a) {
			return 1
		}
		return 0
	})
	for i, want := range all {
		if got := q.pop(); got != want {
			t.Fatalf("pop %d = %+v, want %+v", i, got, want)
		}
	}
	if q.Len() != 0 {
		t.Fatal("queue not empty")
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"p50 of 10", ds, 50, 5},
		{"p95 of 10", ds, 95, 10},
		{"p10 of 10", ds, 10, 1},
		{"p11 of 10", ds, 11, 2},
		{"p100", ds, 100, 10},
		{"single", ds[:1], 99, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.in, tc.p); got != tc.want {
				t.Errorf("Percentile(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}

func TestDownsample(t *testing.T) {
	u := &Usage{Shares: 2}
	u.add(0, []int{4, 0})
	u.add(5, []int{2, 6})
	u.add(5, []int{2, 8}) // same time: replaces
	u.add(15, []int{0, 0})
	starts, inUse, over := u.Downsample(0, 20, 2, []int{3, 4})
	if len(starts) != 2 || starts[1] != 10 {
		t.Fatalf("starts = %v", starts)
	}
	// Bucket 0 (0..10): share 0 holds 4 for 5 and 2 for 5 = 3; share 1
	// holds 8 for 5 = 4. Bucket 1 (10..20): share 0 2 for 5 = 1; share 1
	// 8 for 5 = 4.
	want := [][]float64{{3, 1}, {4, 4}}
	// Over quota: share 0 (quota 3) is 1 over for 5 in bucket 0 = 0.5;
	// share 1 (quota 4) is 4 over for 5 in each bucket = 2.
	wantOver := [][]float64{{0.5, 0}, {2, 2}}
	for s := range want {
		for b := range want[s] {
			if inUse[s][b] != want[s][b] || over[s][b] != wantOver[s][b] {
				t.Errorf("share %d bucket %d: in use %v over %v, want %v and %v", s, b, inUse[s][b], over[s][b], want[s][b], wantOver[s][b])
			}
		}
	}
}
