package sched

import (
	"reflect"
	"testing"
	"time"
)

// TestPlanComplete: a plan says what the driver would otherwise work out
// itself: the GPUs each start borrows, the start's walltime, grace and
// image resolved against its partition, the grace of a preemption, why a
// job was requeued or failed with its counters after it, where it prefers
// to restart, and the system holds the core set and released.
func TestPlanComplete(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	part := Partition{Name: "gpu", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: 1,
		CheckpointsLocal: true, DefaultWalltime: time.Hour, PreemptGrace: 45 * time.Second, MaxPreemptGrace: 2 * time.Minute,
		DefaultImage: "reg/default:1"}
	cfg := Config{
		Partitions: []Partition{part},
		Nodes:      []Node{{Name: "n1", Partition: "gpu", GPUs: 4}, {Name: "n2", Partition: "gpu", GPUs: 4}},
		Shares: []Share{
			{Name: "a", Partition: "gpu", GPUs: 2, Strategy: LendAndBorrow, BorrowLimit: Unlimited},
			{Name: "b", Partition: "gpu", GPUs: 6, Strategy: Lend},
		},
	}
	job := func(id JobID, share string, seq uint64, gpus int) Job {
		return Job{ID: id, Share: share, Seq: seq, Submit: t0, Nodes: 1, GPUsPerNode: gpus, Grace: DefaultGrace}
	}
	type step struct {
		ev    []Event
		check func(t *testing.T, p Plan)
	}
	started := func(t *testing.T, p Plan, id JobID) Start {
		t.Helper()
		for _, s := range p.Starts {
			if s.Job == id {
				return s
			}
		}
		t.Fatalf("%s did not start: %+v (pending %+v)", id, p.Starts, p.Pending)
		return Start{}
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"borrowed GPUs counted in start order", []step{{
			ev: []Event{Submitted{Job: job("a1", "a", 1, 1)}, Submitted{Job: job("a2", "a", 2, 2)}},
			check: func(t *testing.T, p Plan) {
				for id, want := range map[JobID]int{"a1": 0, "a2": 1} {
					if got := started(t, p, id).Borrowed; got != want {
						t.Errorf("%s borrowed %d GPUs, want %d", id, got, want)
					}
				}
			},
		}}},
		{"walltime, grace and image resolved", []step{{
			ev: []Event{
				Submitted{Job: job("dflt", "b", 1, 1)},
				Submitted{Job: func() Job {
					j := job("own", "b", 2, 1)
					j.Walltime, j.Grace, j.Image = 10*time.Minute, 20*time.Second, "reg/own:2"
					return j
				}()},
				Submitted{Job: func() Job { j := job("capped", "b", 3, 1); j.Grace = time.Hour; return j }()},
			},
			check: func(t *testing.T, p Plan) {
				for id, want := range map[JobID][3]any{
					"dflt":   {time.Hour, 45 * time.Second, "reg/default:1"},
					"own":    {10 * time.Minute, 20 * time.Second, "reg/own:2"},
					"capped": {time.Hour, 2 * time.Minute, "reg/default:1"},
				} {
					s := started(t, p, id)
					if got := [3]any{s.Walltime, s.Grace, s.Image}; got != want {
						t.Errorf("%s: walltime, grace, image = %v, want %v", id, got, want)
					}
				}
			},
		}}},
		{"preemption grace, requeue cause and counts", []step{
			{ev: []Event{Submitted{Job: job("a1", "a", 1, 4)}}},
			{ev: []Event{Submitted{Job: job("a2", "a", 2, 4)}}, check: func(t *testing.T, p Plan) {
				if got := started(t, p, "a2").Borrowed; got != 4 {
					t.Errorf("a2 borrowed %d GPUs, want 4", got)
				}
			}},
			{ev: []Event{Submitted{Job: job("b1", "b", 3, 4)}}, check: func(t *testing.T, p Plan) {
				if len(p.Preempts) != 1 || p.Preempts[0].Grace != 45*time.Second {
					t.Errorf("preempts = %+v, want one with the partition's grace", p.Preempts)
				}
			}},
			{ev: []Event{Exited{ID: "a2", ExitStatus: 143}}, check: func(t *testing.T, p Plan) {
				want := []Requeue{{Job: "a2", Cause: CausePreempted, Counts: Counts{Preemptions: 1}, PreferNode: "n2"}}
				if !reflect.DeepEqual(p.Requeued, want) {
					t.Errorf("requeued = %+v, want %+v", p.Requeued, want)
				}
			}},
		}},
		{"node lost, start failed, then failed past the retries", []step{
			{ev: []Event{Submitted{Job: job("b1", "b", 1, 4)}}},
			{ev: []Event{NodeDown{Node: "n1"}}, check: func(t *testing.T, p Plan) {
				want := []Requeue{{Job: "b1", Cause: CauseNodeLost, Counts: Counts{NodeFailures: 1}, PreferNode: "n1"}}
				if !reflect.DeepEqual(p.Requeued, want) {
					t.Errorf("requeued = %+v, want %+v", p.Requeued, want)
				}
			}},
			{ev: []Event{StartFailed{ID: "b1"}}, check: func(t *testing.T, p Plan) {
				want := []Requeue{{Job: "b1", Cause: CauseStartFailed, Counts: Counts{NodeFailures: 1, StartFailures: 1}, PreferNode: "n2"}}
				if !reflect.DeepEqual(p.Requeued, want) {
					t.Errorf("requeued = %+v, want %+v", p.Requeued, want)
				}
			}},
			{ev: []Event{StartFailed{ID: "b1"}}, check: func(t *testing.T, p Plan) {
				want := []Failure{{Job: "b1", Reason: ReasonStartFailureRetries, Cause: CauseStartFailed, Counts: Counts{NodeFailures: 1, StartFailures: 2}}}
				if !reflect.DeepEqual(p.Failed, want) || len(p.Requeued) != 0 {
					t.Errorf("failed = %+v, requeued %+v; want %+v", p.Failed, p.Requeued, want)
				}
			}},
		}},
		{"system hold set, then released", []step{
			{ev: []Event{Submitted{Job: job("big", "b", 1, 6)}}, check: func(t *testing.T, p Plan) {
				want := []HoldChange{{Job: "big", Bit: HoldSystem, Set: true, Reason: ReasonNeverFits}}
				if !reflect.DeepEqual(p.Holds, want) {
					t.Errorf("holds = %+v, want %+v", p.Holds, want)
				}
			}},
			{ev: []Event{NodeUp{Node: "n1", GPUs: 8}}, check: func(t *testing.T, p Plan) {
				want := []HoldChange{{Job: "big", Bit: HoldSystem}}
				if !reflect.DeepEqual(p.Holds, want) {
					t.Errorf("holds = %+v, want %+v", p.Holds, want)
				}
			}},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range cfg.Nodes {
				if err := s.Apply(NodeUp{Node: n.Name}); err != nil {
					t.Fatal(err)
				}
			}
			s.Schedule(t0)
			for i, st := range tt.steps {
				for _, ev := range st.ev {
					if err := s.Apply(ev); err != nil {
						t.Fatalf("step %d: %T: %v", i, ev, err)
					}
				}
				p := s.Schedule(t0.Add(time.Duration(i+1) * time.Minute))
				if st.check != nil {
					st.check(t, p)
				}
				if testing.Verbose() {
					t.Logf("step %d: %+v", i, p)
				}
			}
		})
	}
}
