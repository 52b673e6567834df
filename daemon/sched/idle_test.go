package sched

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// In every reclaim an idle borrower is the victim over a busy one: 8 jobs
// of a borrowing share run on 2 nodes (4 of them borrowed), any one of
// them is marked idle, also one of a higher priority and started first,
// and the lender's job takes exactly that one. Unmarked, the usual order
// picks the most recently started; a requeued and restarted run is busy
// again.
func TestIdleBorrowerReclaimedFirst(t *testing.T) {
	cfg := Config{
		Partitions: []Partition{{Name: "gpu", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: Unlimited}},
		Nodes:      []Node{{Name: "n1", Partition: "gpu", GPUs: 4}, {Name: "n2", Partition: "gpu", GPUs: 4}},
		Shares: []Share{
			{Name: "own", Partition: "gpu", GPUs: 4, Strategy: Lend},
			{Name: "bor", Partition: "gpu", GPUs: 4, Strategy: LendAndBorrow, BorrowLimit: Unlimited},
		},
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// setup starts bor's 8 jobs, b1 (priority 50) first, b2..b8 (priority
	// 10) a second apart.
	setup := func(t *testing.T) (*Scheduler, time.Time) {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"n1", "n2"} {
			if err := s.Apply(NodeUp{Node: n}); err != nil {
				t.Fatal(err)
			}
		}
		now := t0
		for i := 1; i <= 8; i++ {
			prio := 10
			if i == 1 {
				prio = 50
			}
			id := JobID(fmt.Sprintf("b%d", i))
			if err := s.Apply(Submitted{Job: Job{ID: id, Share: "bor", Seq: uint64(i), Submit: t0, Nodes: 1, GPUsPerNode: 1, Priority: prio}}); err != nil {
				t.Fatal(err)
			}
			if p := s.Schedule(now); len(p.Starts) != 1 {
				t.Fatalf("%s: plan %+v", id, p)
			}
			now = now.Add(time.Second)
		}
		return s, now
	}
	reclaim := func(t *testing.T, s *Scheduler, now time.Time) JobID {
		t.Helper()
		if err := s.Apply(Submitted{Job: Job{ID: "o1", Share: "own", Seq: 100, Submit: now, Nodes: 1, GPUsPerNode: 1}}); err != nil {
			t.Fatal(err)
		}
		p := s.Schedule(now)
		if len(p.Preempts) != 1 || p.Preempts[0].For != "o1" {
			t.Fatalf("reclaim: preemptions %+v", p.Preempts)
		}
		if err := s.consistent(nil); err != nil {
			t.Fatal(err)
		}
		return p.Preempts[0].Victim
	}
	t.Run("none idle", func(t *testing.T) {
		s, now := setup(t)
		if v := reclaim(t, s, now); v != "b8" {
			t.Errorf("victim %s, want b8, the most recently started", v)
		}
	})
	for i := 1; i <= 8; i++ {
		idle := JobID(fmt.Sprintf("b%d", i))
		t.Run(string(idle)+" idle", func(t *testing.T) {
			s, now := setup(t)
			if err := s.Apply(JobIdle{ID: idle, Idle: true}); err != nil {
				t.Fatal(err)
			}
			if !s.Idle(idle) {
				t.Fatalf("%s not idle", idle)
			}
			if v := reclaim(t, s, now); v != idle {
				t.Errorf("victim %s, want the idle %s", v, idle)
			}
		})
	}
	t.Run("busy again", func(t *testing.T) {
		s, now := setup(t)
		for _, ev := range []Event{JobIdle{ID: "b3", Idle: true}, JobIdle{ID: "b3", Idle: false}} {
			if err := s.Apply(ev); err != nil {
				t.Fatal(err)
			}
		}
		if v := reclaim(t, s, now); v != "b8" {
			t.Errorf("victim %s, want b8", v)
		}
	})
	t.Run("a new run is busy", func(t *testing.T) {
		s, now := setup(t)
		if err := s.Apply(JobIdle{ID: "b3", Idle: true}); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(Requeued{ID: "b3"}); err != nil {
			t.Fatal(err)
		}
		if p := s.Schedule(now); len(p.Starts) != 1 || p.Starts[0].Job != "b3" {
			t.Fatalf("restart: %+v", p)
		}
		if s.Idle("b3") {
			t.Error("the new run of b3 is idle")
		}
		if v := reclaim(t, s, now.Add(time.Second)); v != "b3" {
			t.Errorf("victim %s, want b3, now the most recently started", v)
		}
	})
	t.Run("errors", func(t *testing.T) {
		s, _ := setup(t)
		if err := s.Apply(JobIdle{ID: "nope", Idle: true}); !errors.Is(err, ErrUnknownJob) {
			t.Errorf("unknown job: %v", err)
		}
		if err := s.Apply(Submitted{Job: Job{ID: "q", Share: "own", Seq: 50, Submit: t0, Nodes: 1, GPUsPerNode: 8}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(JobIdle{ID: "q", Idle: true}); !errors.Is(err, ErrInvalid) {
			t.Errorf("pending job: %v", err)
		}
	})
}
