package sched

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// A fenced GPU is given to no new job, the job holding it keeps it, the
// partition's capacity leaves it out, a reload keeps the fence, and
// clearing it gives it out again.
func TestGPUsFenced(t *testing.T) {
	cfg := Config{
		Partitions: []Partition{{Name: "gpu", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: Unlimited}},
		Nodes:      []Node{{Name: "n1", Partition: "gpu", GPUs: 4}},
		Shares:     []Share{{Name: "a", Partition: "gpu", GPUs: 4, Strategy: LendAndBorrow, BorrowLimit: Unlimited}},
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	apply := func(ev Event) {
		t.Helper()
		if err := s.Apply(ev); err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
		if err := s.consistent(nil); err != nil {
			t.Fatalf("after %T: %v", ev, err)
		}
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	seq := uint64(0)
	submit := func(id JobID, gpus int) {
		seq++
		apply(Submitted{Job: Job{ID: id, Share: "a", Seq: seq, Submit: t0, Nodes: 1, GPUsPerNode: gpus}})
	}
	started := func(p Plan) map[JobID][]int {
		out := map[JobID][]int{}
		for _, st := range p.Starts {
			out[st.Job] = st.Allocs[0].GPUs
		}
		return out
	}
	apply(NodeUp{Node: "n1"})
	submit("1.x", 1)
	if got := started(s.Schedule(t0)); !slices.Equal(got["1.x"], []int{0}) {
		t.Fatalf("first start %v, want GPU 0", got)
	}
	// GPU 0 (held by 1.x) and GPU 2 fall sick.
	apply(GPUsFenced{Node: "n1", GPUs: []int{2, 0}})
	if got := s.FencedGPUs("n1"); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("FencedGPUs = %v", got)
	}
	submit("2.x", 2)
	submit("3.x", 1)
	got := started(s.Schedule(t0.Add(time.Second)))
	if !slices.Equal(got["2.x"], []int{1, 3}) {
		t.Errorf("2.x got %v, want the healthy free GPUs 1 and 3 (all starts %v)", got["2.x"], got)
	}
	if _, ok := got["3.x"]; ok {
		t.Errorf("3.x started on %v: only fenced GPUs were free", got["3.x"])
	}
	// A reload keeps the fence.
	apply(ConfigReplaced{Config: cfg})
	if f := s.FencedGPUs("n1"); !slices.Equal(f, []int{0, 2}) {
		t.Errorf("after a reload FencedGPUs = %v", f)
	}
	apply(Exited{ID: "1.x"})
	if got := started(s.Schedule(t0.Add(2 * time.Second))); len(got) != 0 {
		t.Errorf("started %v on fenced GPUs", got)
	}
	// Cleared: GPU 0 and 2 are given again.
	apply(GPUsFenced{Node: "n1"})
	if got := started(s.Schedule(t0.Add(3 * time.Second))); len(got["3.x"]) != 1 || !slices.Contains([]int{0, 2}, got["3.x"][0]) {
		t.Errorf("after the clear 3.x got %v", got)
	}
	for _, bad := range []Event{GPUsFenced{Node: "n1", GPUs: []int{-1}}, GPUsFenced{Node: "n1", GPUs: []int{maxNodeGPUs}}} {
		if err := s.Apply(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: err %v, want ErrInvalid", bad, err)
		}
	}
	if err := s.Apply(GPUsFenced{Node: "nope", GPUs: []int{0}}); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("unknown node: err %v", err)
	}
}
