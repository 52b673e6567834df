package sched

import (
	"errors"
	"math"
	"testing"
	"time"
)

// fairCore is one node of 8 GPUs lent by "own" to the borrowers x and y.
func fairCore(t *testing.T) *Scheduler {
	t.Helper()
	s, err := New(Config{FairShare: true, UsageHalfLife: time.Hour,
		Partitions: []Partition{{Name: "p", PreemptionRetries: Unlimited}},
		Nodes:      []Node{{Name: "n1", Partition: "p", GPUs: 8}},
		Shares: []Share{{Name: "own", Partition: "p", GPUs: 8, Strategy: Lend},
			{Name: "x", Partition: "p", Strategy: LendAndBorrow, BorrowLimit: Unlimited},
			{Name: "y", Partition: "p", Strategy: LendAndBorrow, BorrowLimit: Unlimited}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(NodeUp{Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUsageIndependentOfPassRate: the integral does not depend on how often
// the driver calls Schedule, and matches the closed form.
func TestUsageIndependentOfPassRate(t *testing.T) {
	const span = 7200 // two half-lives
	want := 4 * time.Hour.Seconds() / math.Ln2 * (1 - 0.25)
	for _, step := range []int{1, 9, 600, span} {
		s := fairCore(t)
		if err := s.Apply(Submitted{Job: Job{ID: "j", Share: "x", User: "u", Seq: 1, Nodes: 1, GPUsPerNode: 4}}); err != nil {
			t.Fatal(err)
		}
		if p := s.Schedule(scBase); len(p.Starts) != 1 {
			t.Fatalf("starts %v", p.Starts)
		}
		for at := step; at <= span; at += step {
			s.Schedule(scBase.Add(time.Duration(at) * time.Second))
		}
		got := s.ShareFairUsage("x")
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("step %ds: usage %v, want %v", step, got, want)
		}
		u := s.Usage()
		if len(u.Shares) != 1 || u.Shares[0].Share != "x" || len(u.Shares[0].Users) != 1 || math.Abs(u.Shares[0].Users[0].GPUSeconds-want) > 1e-9*want {
			t.Errorf("step %ds: Usage() = %+v", step, u)
		}
	}
}

// TestUsageRestoredCountsAdoptedJobs: a core restored after a restart takes
// the recorded usage and counts the adopted jobs over the downtime.
func TestUsageRestoredCountsAdoptedJobs(t *testing.T) {
	s := fairCore(t)
	jb := Job{ID: "j", Share: "x", User: "u", Seq: 1, Nodes: 1, GPUsPerNode: 4}
	if err := s.Apply(Submitted{Job: jb}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(scBase)
	s.Schedule(scBase.Add(100 * time.Second))
	st := s.Usage()

	r := fairCore(t)
	info, _ := s.Job("j")
	if err := r.Apply(Adopted{Job: info.Job, Allocs: info.Allocs, Started: info.Started}); err != nil {
		t.Fatal(err)
	}
	if err := r.Apply(UsageRestored{State: st}); err != nil {
		t.Fatal(err)
	}
	r.Schedule(scBase.Add(200 * time.Second))
	s.Schedule(scBase.Add(200 * time.Second))
	if got, want := r.ShareFairUsage("x"), s.ShareFairUsage("x"); math.Abs(got-want) > 1e-9*want || want < 700 {
		t.Fatalf("restored core: usage %v, the one that ran on %v", got, want)
	}
}

func TestUsageRestoredRefusesBadState(t *testing.T) {
	cases := []struct {
		name string
		st   UsageState
	}{
		{"no share name", UsageState{Shares: []ShareUse{{Borrowed: 1}}}},
		{"share twice", UsageState{Shares: []ShareUse{{Share: "x"}, {Share: "x"}}}},
		{"negative", UsageState{Shares: []ShareUse{{Share: "x", Borrowed: -1}}}},
		{"NaN", UsageState{Shares: []ShareUse{{Share: "x", Borrowed: math.NaN()}}}},
		{"infinite user", UsageState{Shares: []ShareUse{{Share: "x", Users: []UserUse{{User: "u", GPUSeconds: math.Inf(1)}}}}}},
		{"user twice", UsageState{Shares: []ShareUse{{Share: "x", Users: []UserUse{{User: "u"}, {User: "u"}}}}}},
		{"no user name", UsageState{Shares: []ShareUse{{Share: "x", Users: []UserUse{{GPUSeconds: 1}}}}}},
		{"too many users", UsageState{Shares: []ShareUse{{Share: "x", Users: make([]UserUse, maxUsageUsers+1)}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fairCore(t)
			if err := s.Apply(UsageRestored{State: UsageState{Shares: []ShareUse{{Share: "y", Borrowed: 5}}}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Apply(UsageRestored{State: c.st}); !errors.Is(err, ErrInvalid) {
				t.Fatalf("err %v, want ErrInvalid", err)
			}
			if got := s.ShareFairUsage("y"); got != 5 {
				t.Fatalf("a refused restore changed the usage: y %v", got)
			}
		})
	}
}

// TestUsageKeptAcrossReload: a share renamed by a reload keeps its usage
// under its old name, and finds it when the name comes back.
func TestUsageKeptAcrossReload(t *testing.T) {
	s := fairCore(t)
	if err := s.Apply(UsageRestored{State: UsageState{At: scBase, Shares: []ShareUse{{Share: "x", Borrowed: 1000}}}}); err != nil {
		t.Fatal(err)
	}
	cfg := cloneConfig(s.cfg)
	cfg.Shares[1].Name = "x2"
	if err := s.Apply(ConfigReplaced{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(scBase.Add(time.Hour))
	if x, x2 := s.ShareFairUsage("x"), s.ShareFairUsage("x2"); math.Abs(x-500) > 1e-9 || x2 != 0 {
		t.Fatalf("after the rename and a half-life: x %v x2 %v, want 500 and 0", x, x2)
	}
	cfg.Shares[1].Name = "x"
	if err := s.Apply(ConfigReplaced{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if x := s.ShareFairUsage("x"); math.Abs(x-500) > 1e-9 {
		t.Fatalf("after renaming back: x %v", x)
	}
}

// TestWaitCreditKeptAcrossReload: the wait credit counts from when a job
// first became eligible (its submission, or the pass before it when it was
// submitted since), and a reload, which re-queues every pending job, keeps
// it.
func TestWaitCreditKeptAcrossReload(t *testing.T) {
	s := fairCore(t)
	if err := s.Apply(Submitted{Job: Job{ID: "own", Share: "own", Seq: 1, Nodes: 1, GPUsPerNode: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Submitted{Job: Job{ID: "big", Share: "x", Seq: 2, Submit: scBase, Nodes: 1, GPUsPerNode: 8}}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(scBase.Add(time.Second))
	if err := s.Apply(Submitted{Job: Job{ID: "later", Share: "x", Seq: 3, Submit: scBase, Nodes: 1, GPUsPerNode: 8}}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(scBase.Add(time.Hour))
	if err := s.Apply(ConfigReplaced{Config: cloneConfig(s.cfg)}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(scBase.Add(2 * time.Hour))
	big, later := s.jobs["big"], s.jobs["later"]
	if big == nil || later == nil || big.state != Pending || later.state != Pending {
		t.Fatalf("big %+v later %+v: both should wait", big, later)
	}
	if !big.readyAt.Equal(scBase) {
		t.Errorf("big became eligible at %v, want %v (its submission)", big.readyAt, scBase)
	}
	if want := scBase.Add(time.Second); !later.readyAt.Equal(want) {
		t.Errorf("later became eligible at %v, want %v (the pass before it came)", later.readyAt, want)
	}
	if c := s.waitCredit(big.share, big); c != 2*3600*8 {
		t.Errorf("wait credit %v, want %v", c, 2*3600*8)
	}
}

// TestWaitCreditSkipsRunTime: a borrower preempted after running an hour
// comes back with the wait it had before it started, not the hour it ran.
func TestWaitCreditSkipsRunTime(t *testing.T) {
	s := fairCore(t)
	if err := s.Apply(Submitted{Job: Job{ID: "b", Share: "x", Seq: 1, Submit: scBase, Nodes: 1, GPUsPerNode: 4}}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(scBase.Add(10 * time.Second)) // waited 10 s, starts
	if err := s.Apply(Submitted{Job: Job{ID: "o", Share: "own", Seq: 2, Nodes: 1, GPUsPerNode: 8}}); err != nil {
		t.Fatal(err)
	}
	if p := s.Schedule(scBase.Add(time.Hour)); len(p.Preempts) != 1 || p.Preempts[0].Victim != "b" {
		t.Fatalf("preempts %v", p.Preempts)
	}
	if err := s.Apply(Exited{ID: "b", ExitStatus: 271}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(scBase.Add(time.Hour + time.Second))
	b := s.jobs["b"]
	at := scBase.Add(time.Hour + 101*time.Second)
	s.now = at
	// Its exit was applied after the pass at 1 h: its new wait counts from
	// that pass.
	if b.state != Pending || b.waitedNow(at) != 111*time.Second {
		t.Fatalf("b %v: waited %v, want 111s (10 s before its start, 101 s since the pass before its requeue)", b.state, b.waitedNow(at))
	}
}
