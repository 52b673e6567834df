package sched

import (
	"testing"
	"time"
)

// TestNextWake checks the core tells its driver when the next begin time
// comes, so that the driver need not poll: never late, and none once no
// job waits for one.
func TestNextWake(t *testing.T) {
	s, err := New(Config{
		Partitions: []Partition{{Name: "gpu", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: Unlimited}},
		Nodes:      []Node{{Name: "n1", Partition: "gpu", GPUs: 4}},
		Shares:     []Share{{Name: "a", Partition: "gpu", GPUs: 4, Strategy: LendAndBorrow, BorrowLimit: Unlimited}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, ok := s.NextWake(); ok {
		t.Fatal("a wake time with no job")
	}
	submit := func(id JobID, seq uint64, nb time.Time) {
		t.Helper()
		if err := s.Apply(Submitted{Job: Job{ID: id, Share: "a", Seq: seq, Submit: t0, Nodes: 1, GPUsPerNode: 1, NotBefore: nb}}); err != nil {
			t.Fatal(err)
		}
	}
	submit("late", 1, t0.Add(time.Hour))
	submit("soon", 2, t0.Add(time.Minute))
	submit("now", 3, time.Time{})
	if w, ok := s.NextWake(); !ok || !w.Equal(t0.Add(time.Minute)) {
		t.Fatalf("NextWake = %v %v, want %v", w, ok, t0.Add(time.Minute))
	}
	s.Schedule(t0.Add(time.Minute))
	if w, ok := s.NextWake(); !ok || !w.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after soon's time: NextWake = %v %v, want %v", w, ok, t0.Add(time.Hour))
	}
	// Moving the time later may leave an early wake, never a late one.
	if err := s.Apply(JobAltered{ID: "late", Priority: 0, NotBefore: t0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if w, ok := s.NextWake(); !ok || w.After(t0.Add(2*time.Hour)) {
		t.Fatalf("after the change: NextWake = %v %v", w, ok)
	}
	s.Schedule(t0.Add(2 * time.Hour))
	if w, ok := s.NextWake(); ok {
		t.Fatalf("NextWake = %v with no job waiting", w)
	}
}

// A job held as never fitting asks for a pass when its partition's
// NeverFitsFailAfter runs out, counted from the first pass that saw it.
func TestNextWakeNeverFits(t *testing.T) {
	s, err := New(Config{
		Partitions: []Partition{{Name: "gpu", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: Unlimited, NeverFitsFailAfter: time.Hour}},
		Nodes:      []Node{{Name: "n1", Partition: "gpu", GPUs: 4}},
		Shares:     []Share{{Name: "a", Partition: "gpu", GPUs: 4, Strategy: Lend}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := s.Apply(Submitted{Job: Job{ID: "big", Share: "a", Seq: 1, Submit: t0, Nodes: 1, GPUsPerNode: 4}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Submitted{Job: Job{ID: "huge", Share: "a", Seq: 2, Submit: t0, Nodes: 2, GPUsPerNode: 4}}); err != nil {
		t.Fatal(err)
	}
	if w, ok := s.NextWake(); ok {
		t.Fatalf("NextWake = %v before any pass saw the hold", w)
	}
	s.Schedule(t0.Add(time.Minute))
	if w, ok := s.NextWake(); !ok || !w.Equal(t0.Add(time.Hour+time.Minute)) {
		t.Fatalf("NextWake = %v %v, want %v", w, ok, t0.Add(time.Hour+time.Minute))
	}
	if p := s.Schedule(t0.Add(time.Hour)); len(p.Failed) != 0 {
		t.Fatalf("failed before its time: %v", p.Failed)
	}
	p := s.Schedule(t0.Add(time.Hour + time.Minute))
	if len(p.Failed) != 1 || p.Failed[0] != (Failure{Job: "huge", Reason: ReasonNeverFitsTimeLimit}) {
		t.Fatalf("Failed = %v, want huge NeverFitsTimeLimit", p.Failed)
	}
	if w, ok := s.NextWake(); ok {
		t.Fatalf("NextWake = %v with nothing held", w)
	}
}
