package sched

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// topoCluster is a partition of four 4-GPU nodes in two racks of two
// (r0: n0 n1, r1: n2 n3) inside one block, with a LEND share "own"
// owning every GPU and a borrower "bor".
func topoCluster(defaultLevel string) Config {
	return Config{
		Partitions: []Partition{{Name: "p", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: Unlimited,
			Topology: "fab", DefaultTopologyLevel: defaultLevel}},
		Nodes: []Node{{Name: "n0", Partition: "p", GPUs: 4}, {Name: "n1", Partition: "p", GPUs: 4},
			{Name: "n2", Partition: "p", GPUs: 4}, {Name: "n3", Partition: "p", GPUs: 4}},
		Shares: []Share{{Name: "own", Partition: "p", GPUs: 16, Strategy: Lend},
			{Name: "bor", Partition: "p", GPUs: 0, Strategy: LendAndBorrow, BorrowLimit: Unlimited}},
		Topologies: []Topology{{Name: "fab", Levels: []string{"block", "rack"}, Domains: []Domain{
			{Level: "block", Name: "b0", Nodes: []string{"n0", "n1", "n2", "n3"}},
			{Level: "rack", Name: "r0", Nodes: []string{"n0", "n1"}},
			{Level: "rack", Name: "r1", Nodes: []string{"n2", "n3"}},
		}}},
	}
}

// topoJob is a job of share sh: nodes × gpus, with a topology request.
func topoJob(id JobID, seq uint64, sh string, nodes, gpus int, r TopologyRequest) Job {
	return Job{ID: id, Seq: seq, Share: sh, Nodes: nodes, GPUsPerNode: gpus, Topology: r, Submit: topoT0}
}

var topoT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// startedOn is where plan started id: its nodes, nil when it did not.
func startedOn(p Plan, id JobID) []string {
	for _, st := range p.Starts {
		if st.Job == id {
			var out []string
			for _, a := range st.Allocs {
				out = append(out, a.Node)
			}
			return out
		}
	}
	return nil
}

// TestTopologyPlacement: where jobs start in a partition with racks, and
// why the ones that do not wait.
func TestTopologyPlacement(t *testing.T) {
	rack := TopologyRequest{Level: "rack"}
	tests := []struct {
		name  string
		dflt  string         // the partition's default level
		busy  map[string]int // GPUs held on each node by running jobs
		job   Job
		later time.Duration // a second pass this long after the first
		want  []string      // its nodes (nil: it does not start)
		// reason while it does not
		reason Reason
	}{{
		name: "small jobs pack into the fuller rack",
		// r0 has 6 free GPUs (n0 2), r1 3 (n2 3): node best fit alone
		// would take n0 and leave r1's GPUs split.
		busy: map[string]int{"n0": 2, "n2": 1, "n3": 4},
		job:  topoJob("j", 1, "own", 1, 2, TopologyRequest{}),
		want: []string{"n2"},
	}, {
		name: "required takes the rack that holds it",
		busy: map[string]int{"n0": 1},
		job:  topoJob("j", 1, "own", 2, 4, rack),
		want: []string{"n2", "n3"},
	}, {
		name:   "required waits while no rack holds it",
		busy:   map[string]int{"n0": 1, "n2": 1},
		job:    topoJob("j", 1, "own", 2, 4, rack),
		reason: ReasonTopologyWaiting,
	}, {
		name: "preferred spans racks when it must",
		busy: map[string]int{"n0": 1, "n2": 1},
		job:  topoJob("j", 1, "own", 2, 4, TopologyRequest{Level: "rack", Preferred: true}),
		want: []string{"n1", "n3"},
	}, {
		name:  "a bounded wait turns preferred",
		busy:  map[string]int{"n0": 1, "n2": 1},
		job:   topoJob("j", 1, "own", 2, 4, TopologyRequest{Level: "rack", Wait: time.Minute}),
		later: time.Minute,
		want:  []string{"n1", "n3"},
	}, {
		name: "the partition's default level is preferred: fewest racks",
		dflt: "rack",
		busy: map[string]int{"n0": 4},
		job:  topoJob("j", 1, "own", 3, 4, TopologyRequest{}),
		want: []string{"n2", "n3", "n1"},
	}, {
		name:   "no rack is big enough",
		job:    topoJob("j", 1, "own", 3, 1, rack),
		reason: ReasonTopologyNoDomain,
	}, {
		name:   "a level the topology lacks",
		job:    topoJob("j", 1, "own", 1, 1, TopologyRequest{Level: "pod"}),
		reason: ReasonTopologyNoDomain,
	}, {
		name: "the block holds three nodes",
		job:  topoJob("j", 1, "own", 3, 1, TopologyRequest{Level: "block"}),
		want: []string{"n0", "n1", "n2"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := topoUp(t, topoCluster(tc.dflt))
			seq := uint64(100)
			for _, n := range []string{"n0", "n1", "n2", "n3"} {
				if g := tc.busy[n]; g > 0 {
					seq++
					adopt(t, s, topoJob(JobID("x"+n), seq, "own", 1, g, TopologyRequest{}), n)
				}
			}
			if r := s.NeverFits(tc.job); r != ReasonNone && r != tc.reason {
				t.Fatalf("NeverFits = %v", r)
			}
			if err := s.Apply(Submitted{Job: tc.job}); err != nil {
				t.Fatal(err)
			}
			now := topoT0.Add(time.Second)
			got := startedOn(s.Schedule(now), tc.job.ID)
			if tc.later > 0 {
				if got != nil {
					t.Fatalf("started at once on %v", got)
				}
				if w, ok := s.NextWake(); !ok || w.After(now.Add(tc.later)) {
					t.Fatalf("NextWake = %v %v, want by %v", w, ok, now.Add(tc.later))
				}
				got = startedOn(s.Schedule(now.Add(tc.later)), tc.job.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("started on %v, want %v", got, tc.want)
			}
			if tc.want == nil {
				info, _ := s.Job(tc.job.ID)
				if info.Reason != tc.reason {
					t.Fatalf("reason %v, want %v", info.Reason, tc.reason)
				}
				if tc.reason.NeverFits() && info.Job.Hold&HoldSystem == 0 {
					t.Fatal("no system hold on a job no domain can hold")
				}
			}
		})
	}
}

// topoUp is a core for cfg with every node up.
func topoUp(t *testing.T, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range cfg.Nodes {
		if err := s.Apply(NodeUp{Node: n.Name}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// adopt makes j run on node, on its first GPUs free there.
func adopt(t *testing.T, s *Scheduler, j Job, node string) {
	t.Helper()
	n := s.nodeByName[node]
	gpus := n.valid.andNot(n.held).list()[:j.GPUsPerNode]
	if err := s.Apply(Adopted{Job: j, Allocs: []Alloc{{Node: node, GPUs: gpus}}, Started: topoT0}); err != nil {
		t.Fatal(err)
	}
}

// TestTopologyReclaim: an owner's 2-node rack job reclaims the borrower's
// jobs of one rack, not the cheapest nodes across racks.
func TestTopologyReclaim(t *testing.T) {
	s, err := New(topoCluster(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n0", "n1", "n2", "n3"} {
		if err := s.Apply(NodeUp{Node: n}); err != nil {
			t.Fatal(err)
		}
	}
	// Borrowed jobs on every node; the lowest priority ones (the first
	// victims by victim order) on n0 and n2, in different racks.
	prio := map[string]int{"n0": 0, "n1": 5, "n2": 0, "n3": 5}
	now := topoT0
	for i, n := range []string{"n0", "n1", "n2", "n3"} {
		j := topoJob(JobID("b"+n), uint64(i+1), "bor", 1, 4, TopologyRequest{})
		j.Priority = prio[n]
		if err := s.Apply(Submitted{Job: j}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		if got := startedOn(s.Schedule(now), j.ID); len(got) != 1 || got[0] != n {
			t.Fatalf("%s started on %v, want %s", j.ID, got, n)
		}
	}
	if err := s.Apply(Submitted{Job: topoJob("own", 10, "own", 2, 4, TopologyRequest{Level: "rack"})}); err != nil {
		t.Fatal(err)
	}
	p := s.Schedule(now.Add(time.Second))
	var victims []string
	for _, pr := range p.Preempts {
		victims = append(victims, string(pr.Victim))
	}
	slices.Sort(victims)
	// Node by node the cheapest victims are bn2 and bn0 (priority 0, in
	// two racks); by rack, r1's pair comes first in victim order.
	if got := strings.Join(victims, " "); got != "bn2 bn3" {
		t.Fatalf("victims %q, want the jobs of one rack (bn2 bn3)", got)
	}
}

// TestTopologyReservation: with backfill, a blocked rack job's
// reservation is for the rack that frees first, not the earliest nodes
// across racks.
func TestTopologyReservation(t *testing.T) {
	cfg := topoCluster("")
	cfg.Backfill = true
	cfg.Shares[0].GPUs = 32 // room in its quota: blocked for GPUs alone
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n0", "n1", "n2", "n3"} {
		if err := s.Apply(NodeUp{Node: n}); err != nil {
			t.Fatal(err)
		}
	}
	// Ends: n0 in 1h, n1 in 5h, n2 in 2h, n3 in 3h. Across racks the two
	// earliest are n0 and n2 (2h); in one rack r1 (3h) beats r0 (5h).
	ends := map[string]time.Duration{"n0": time.Hour, "n1": 5 * time.Hour, "n2": 2 * time.Hour, "n3": 3 * time.Hour}
	now := topoT0
	for i, n := range []string{"n0", "n1", "n2", "n3"} {
		j := topoJob(JobID("x"+n), uint64(i+1), "own", 1, 4, TopologyRequest{})
		j.Walltime = ends[n]
		if err := s.Apply(Submitted{Job: j}); err != nil {
			t.Fatal(err)
		}
		if got := startedOn(s.Schedule(now), j.ID); len(got) != 1 || got[0] != n {
			t.Fatalf("%s started on %v, want %s", j.ID, got, n)
		}
	}
	big := topoJob("big", 10, "own", 2, 4, TopologyRequest{Level: "rack"})
	big.Walltime = time.Hour
	if err := s.Apply(Submitted{Job: big}); err != nil {
		t.Fatal(err)
	}
	s.Schedule(now.Add(time.Second))
	est, ok := s.Estimates()["big"]
	if !ok {
		info, _ := s.Job("big")
		t.Fatalf("no reservation (%v)", info.Reason)
	}
	var nodes []string
	for _, a := range est.Allocs {
		nodes = append(nodes, a.Node)
	}
	if !slices.Equal(nodes, []string{"n2", "n3"}) || !est.Start.Equal(now.Add(3*time.Hour)) {
		t.Fatalf("reservation on %v at %v, want n2 n3 at %v", nodes, est.Start, now.Add(3*time.Hour))
	}
}

// TestTopologyValidate: what a configuration's topologies may not be.
func TestTopologyValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"unknown node", func(c *Config) { c.Topologies[0].Domains[1].Nodes = append(c.Topologies[0].Domains[1].Nodes, "n9") }, `unknown node "n9"`},
		{"node in two racks", func(c *Config) { c.Topologies[0].Domains[2].Nodes = append(c.Topologies[0].Domains[2].Nodes, "n0") }, `node "n0" in rack "r0" and "r1"`},
		{"unknown level", func(c *Config) { c.Topologies[0].Domains[1].Level = "pod" }, `unknown level "pod"`},
		{"levels out of order", func(c *Config) { c.Topologies[0].Levels = []string{"rack", "block"} }, `spans rack "r0" and "r1"`},
		{"unknown topology", func(c *Config) { c.Partitions[0].Topology = "nosuch" }, `unknown topology "nosuch"`},
		{"default level not a level", func(c *Config) { c.Partitions[0].DefaultTopologyLevel = "pod" }, `default topology level "pod"`},
		{"duplicate level", func(c *Config) { c.Topologies[0].Levels = []string{"rack", "rack"} }, `duplicate level "rack"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := topoCluster("")
			cfg.Topologies = cloneTopologies(cfg.Topologies)
			tc.edit(&cfg)
			_, err := New(cfg)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := New(topoCluster("rack")); err != nil {
		t.Fatalf("the valid configuration: %v", err)
	}
}

// TestTopologyReloadKeepsRunning: a reload that changes the topology
// leaves running jobs where they are.
func TestTopologyReloadKeepsRunning(t *testing.T) {
	cfg := topoCluster("")
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n0", "n1", "n2", "n3"} {
		if err := s.Apply(NodeUp{Node: n}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Apply(Submitted{Job: topoJob("j", 1, "own", 2, 4, TopologyRequest{Level: "rack"})}); err != nil {
		t.Fatal(err)
	}
	if got := startedOn(s.Schedule(topoT0), "j"); !slices.Equal(got, []string{"n0", "n1"}) {
		t.Fatalf("started on %v", got)
	}
	cfg.Topologies = []Topology{{Name: "fab", Levels: []string{"rack"}, Domains: []Domain{
		{Level: "rack", Name: "ra", Nodes: []string{"n0", "n2"}}, {Level: "rack", Name: "rb", Nodes: []string{"n1", "n3"}}}}}
	if err := s.Apply(ConfigReplaced{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	info, _ := s.Job("j")
	if info.State != Running || len(info.Allocs) != 2 || info.Allocs[0].Node != "n0" || info.Allocs[1].Node != "n1" {
		t.Fatalf("after the reload: %v on %v", info.State, info.Allocs)
	}
	if got := s.DomainsOf("p", "rack", []string{"n0", "n1"}); !slices.Equal(got, []string{"ra", "rb"}) {
		t.Fatalf("DomainsOf = %v", got)
	}
}
