package sched

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// benchCluster is nodes x 8 GPUs, 50 shares holding 90% of the GPUs as
// quota (RESERVE, LEND, LEND_AND_BORROW at 50% and unlimited; in-share
// preemption on every fifth), and pending jobs of 1, 2, 4 or 8 GPUs with
// priorities 0..3 spread over the shares, after the first pass filled the
// cluster.
type benchCluster struct {
	s       *Scheduler
	now     time.Time
	seq     uint64
	rnd     uint64
	running []JobID // started jobs, oldest first (some may have ended)
	walls   bool    // jobs have walltimes (10m to 24h), one in eight 8-GPU jobs spans 2 nodes
}

func (c *benchCluster) next() uint64 {
	c.rnd = c.rnd*6364136223846793005 + 1442695040888963407
	return c.rnd >> 33
}

func (c *benchCluster) submit(b *testing.B) {
	c.seq++
	sh := fmt.Sprintf("s%d", c.next()%50)
	jb := Job{
		ID: JobID(fmt.Sprintf("%d.bench", c.seq)), Share: sh, Seq: c.seq,
		Priority: int(c.next() % 4), Nodes: 1, GPUsPerNode: []int{1, 2, 4, 8}[c.next()%4],
		User: fmt.Sprintf("u%d", c.next()%20),
	}
	if c.walls {
		jb.Walltime = []time.Duration{10 * time.Minute, time.Hour, 4 * time.Hour, 24 * time.Hour}[c.next()%4]
		if jb.GPUsPerNode == 8 && c.next()%8 == 0 {
			jb.Nodes = 2
		}
	}
	err := c.s.Apply(Submitted{Job: jb})
	if err != nil {
		b.Fatal(err)
	}
}

func (c *benchCluster) schedule() Plan {
	c.now = c.now.Add(time.Second)
	p := c.s.Schedule(c.now)
	for _, st := range p.Starts {
		c.running = append(c.running, st.Job)
	}
	return p
}

func newBenchCluster(b *testing.B, nodes, pending int) *benchCluster {
	return newBenchClusterWith(b, nodes, pending, nil)
}

// newBenchClusterWith lets edit change the configuration first.
func newBenchClusterWith(b *testing.B, nodes, pending int, edit func(*Config)) *benchCluster {
	cfg := Config{Partitions: []Partition{{Name: "p", PreemptionRetries: Unlimited}}}
	benchNodes(&cfg, nodes)
	benchShares(&cfg, 50, nodes*8*9/10/50, true)
	if edit != nil {
		edit(&cfg)
	}
	c := startBench(b, cfg, false)
	for i := 0; i < pending; i++ {
		c.submit(b)
	}
	c.schedule()
	c.schedule()
	return c
}

var benchSizes = []struct{ nodes, pending int }{
	{100, 1000}, {100, 10000}, {100, 100000},
	{1000, 1000}, {1000, 10000}, {1000, 100000},
}

// BenchmarkFullPass: a pass that looks at every share (as after a capacity
// change) with the cluster full and jobs pending.
func BenchmarkFullPass(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, sz.pending), func(b *testing.B) {
			c := newBenchCluster(b, sz.nodes, sz.pending)
			runtime.GC() // the setup's garbage is not the pass's cost
			b.ResetTimer()
			c.fullPasses(b)
		})
	}
}

// fullPasses runs b.N passes that each look at every partition, as after
// a capacity change.
func (c *benchCluster) fullPasses(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, p := range c.s.parts {
			p.dirty = true
		}
		c.schedule()
	}
}

// BenchmarkFullPassFairShare is BenchmarkFullPass under fair share, every
// share ordering its 20 users' jobs by their usage (fair_share_users) with
// per-user job and GPU limits.
func BenchmarkFullPassFairShare(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, sz.pending), func(b *testing.B) {
			c := newBenchClusterWith(b, sz.nodes, sz.pending, func(cfg *Config) {
				cfg.FairShare = true
				for i := range cfg.Shares {
					sh := &cfg.Shares[i]
					sh.FairShareUsers, sh.MaxRunningJobsPerUser, sh.MaxGPUsPerUser = true, 64, sh.GPUs/4+8
				}
			})
			runtime.GC()
			b.ResetTimer()
			c.fullPasses(b)
		})
	}
}

// BenchmarkBackfillPass: a full pass with backfill on (issue 14's target:
// at most 50 ms at 1,000 nodes x 8 GPUs, 50 shares, 100,000 pending).
// Every share has a quota of a fiftieth of the GPUs; each node runs one
// 7-GPU job with a walltime of 1 to 24 hours (shares in turn), so every
// share holds 140 of its 160 GPUs and the idle ones are single GPUs spread
// over the nodes. The pending jobs (1, 2, 4 or 8 GPUs, one in eight 8-GPU
// jobs on 2 nodes, walltimes 10 minutes to 24 hours) fit their quota but
// not the fragmented free GPUs: each share's first one reserves (50
// reservations computed per pass over all the nodes), the others are
// tried around the reservations. It reports the reservations a pass
// keeps. fair=true also turns fair share on, as the configuration's
// defaults do; fp=true fair preemption too (as contrib/examples/itp.toml).
func BenchmarkBackfillPass(b *testing.B) {
	for _, sz := range []struct {
		nodes, pending int
		fair, fp       bool
	}{{100, 10000, false, false}, {1000, 10000, false, false}, {1000, 100000, false, false}, {1000, 100000, true, false}, {1000, 100000, true, true}} {
		name := fmt.Sprintf("nodes=%d/pending=%d/fair=%v", sz.nodes, sz.pending, sz.fair)
		if sz.fp {
			name += "/fair_preemption"
		}
		b.Run(name, func(b *testing.B) {
			c := newReservedCluster(b, sz.nodes, sz.pending, sz.fair, sz.fp)
			runtime.GC()
			b.ResetTimer()
			c.fullPasses(b)
			b.ReportMetric(float64(len(c.s.Estimates())), "reservations")
		})
	}
}

func newReservedCluster(b *testing.B, nodes, pending int, fair, fp bool) *benchCluster {
	cfg := Config{Partitions: []Partition{{Name: "p", PreemptionRetries: Unlimited}}, Backfill: true, FairShare: fair, FairPreemption: fp}
	benchNodes(&cfg, nodes)
	benchShares(&cfg, 50, nodes*8/50, false)
	c := startBench(b, cfg, true)
	c.fillNodes(b, nodes, 50)
	for i := 0; i < pending; i++ {
		c.submit(b)
	}
	c.schedule()
	c.schedule()
	return c
}

// BenchmarkFirstPass: the first pass over an empty cluster, which starts
// every job that fits.
func BenchmarkFirstPass(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, sz.pending), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c := newBenchCluster(b, sz.nodes, 0)
				for k := 0; k < sz.pending; k++ {
					c.submit(b)
				}
				runtime.GC()
				b.StartTimer()
				c.schedule()
			}
		})
	}
}

// BenchmarkSubmit: one Submitted plus the pass after it.
func BenchmarkSubmit(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, sz.pending), func(b *testing.B) {
			c := newBenchCluster(b, sz.nodes, sz.pending)
			runtime.GC() // the setup's garbage is not the pass's cost
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.submit(b)
				c.schedule()
			}
		})
	}
}

// BenchmarkExit: one job exits (a running or preempted one, oldest first)
// plus the pass after it, which starts what fits in the freed GPUs.
func BenchmarkExit(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d/pending=%d", sz.nodes, sz.pending), func(b *testing.B) {
			c := newBenchCluster(b, sz.nodes, sz.pending)
			runtime.GC() // the setup's garbage is not the pass's cost
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var id JobID
				for len(c.running) > 0 {
					id = c.running[0]
					c.running = c.running[1:]
					if info, ok := c.s.Job(id); ok && info.State != Pending {
						break
					}
					id = ""
				}
				if id == "" {
					b.StopTimer()
					c.submit(b)
					c.schedule()
					b.StartTimer()
					continue
				}
				if err := c.s.Apply(Exited{ID: id}); err != nil {
					b.Fatal(err)
				}
				c.schedule()
			}
		})
	}
}

// BenchmarkArray: submitting one 10,000-subjob array (and the pass after
// it, which starts what fits), then a full pass with the array pending, on
// 1,000 nodes with 100,000 other jobs pending.
func BenchmarkArray(b *testing.B) {
	idx := make([]int, 10000)
	for i := range idx {
		idx[i] = i
	}
	c := newBenchCluster(b, 1000, 100000)
	runtime.GC()
	b.Run("submit+pass", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			c.seq++
			err := c.s.Apply(Submitted{Job: Job{ID: JobID(fmt.Sprintf("%d[].bench", c.seq)), Share: "s3", Seq: c.seq,
				Priority: 3, Nodes: 1, GPUsPerNode: 1, Array: &Array{Indices: idx, MaxRunning: 100}}})
			if err != nil {
				b.Fatal(err)
			}
			c.schedule()
		}
	})
	b.Run("full-pass", func(b *testing.B) {
		c.fullPasses(b)
	})
}

// BenchmarkMultiNodePreempt: the pass in which a 4-node x 8-GPU owner job
// reclaims GPUs on 1,000 nodes x 8 GPUs filled by borrowers, half of them
// spanning 2 nodes (the node-by-node search plus the seeded ones, issue 13
// item 5).
func BenchmarkMultiNodePreempt(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg := Config{Partitions: []Partition{{Name: "p", PreemptionRetries: Unlimited}}}
		for k := 0; k < 1000; k++ {
			cfg.Nodes = append(cfg.Nodes, Node{Name: fmt.Sprintf("n%04d", k), Partition: "p", GPUs: 8})
		}
		cfg.Shares = []Share{
			{Name: "own", Partition: "p", GPUs: 800, Strategy: Lend},
			{Name: "lab", Partition: "p", GPUs: 0, Strategy: LendAndBorrow, BorrowLimit: Unlimited},
		}
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range cfg.Nodes {
			if err := s.Apply(NodeUp{Node: n.Name}); err != nil {
				b.Fatal(err)
			}
		}
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		for k := 0; k < 1334; k++ {
			nodes := 1 + k%2
			if err := s.Apply(Submitted{Job: Job{ID: JobID(fmt.Sprintf("b%d", k)), Share: "lab", Seq: uint64(k + 1), Nodes: nodes, GPUsPerNode: 4}}); err != nil {
				b.Fatal(err)
			}
		}
		s.Schedule(now)
		if err := s.Apply(Submitted{Job: Job{ID: "o", Share: "own", Seq: 9999, Priority: 1, Nodes: 4, GPUsPerNode: 8}}); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.StartTimer()
		p := s.Schedule(now.Add(time.Second))
		b.StopTimer()
		if len(p.Preempts) == 0 {
			b.Fatal("no preemption")
		}
		b.StartTimer()
	}
}

// benchNodes adds n 8-GPU nodes of partition p.
func benchNodes(cfg *Config, n int) {
	for i := 0; i < n; i++ {
		cfg.Nodes = append(cfg.Nodes, Node{Name: fmt.Sprintf("n%04d", i), Partition: "p", GPUs: 8})
	}
}

// benchShares adds n shares of partition p with quota GPUs each,
// RESERVE, LEND and LEND_AND_BORROW (borrow limit 50) in turn; mixed makes
// every fourth LEND_AND_BORROW without a limit and every fifth preempt in
// its share.
func benchShares(cfg *Config, n, quota int, mixed bool) {
	for i := 0; i < n; i++ {
		sh := Share{Name: fmt.Sprintf("s%d", i), Partition: "p", GPUs: quota, InSharePreemption: mixed && i%5 == 0}
		switch {
		case i%4 == 0:
			sh.Strategy = Reserve
		case i%4 == 1:
			sh.Strategy = Lend
		case i%4 == 3 && mixed:
			sh.Strategy, sh.BorrowLimit = LendAndBorrow, Unlimited
		default:
			sh.Strategy, sh.BorrowLimit = LendAndBorrow, 50
		}
		cfg.Shares = append(cfg.Shares, sh)
	}
}

// startBench makes the core of cfg with every node up.
func startBench(b *testing.B, cfg Config, walls bool) *benchCluster {
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	c := &benchCluster{s: s, now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), rnd: 1, walls: walls}
	for _, n := range cfg.Nodes {
		if err := s.Apply(NodeUp{Node: n.Name}); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// fillNodes starts one 7-GPU job on each of the nodes (walltimes 1 to 24
// hours), the jobs spread over the shares.
func (c *benchCluster) fillNodes(b *testing.B, nodes, shares int) {
	for i := 0; i < nodes; i++ {
		c.seq++
		err := c.s.Apply(Submitted{Job: Job{ID: JobID(fmt.Sprintf("%d.fill", c.seq)), Share: fmt.Sprintf("s%d", i%shares), Seq: c.seq,
			Nodes: 1, GPUsPerNode: 7, Walltime: time.Duration(1+i%24) * time.Hour}})
		if err != nil {
			b.Fatal(err)
		}
	}
	if p := c.schedule(); len(p.Starts) != nodes {
		b.Fatalf("%d fill jobs started, want %d", len(p.Starts), nodes)
	}
}
