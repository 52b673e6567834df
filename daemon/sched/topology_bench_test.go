package sched

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkTopologyPass: issue 33's target, a full pass at 2,000 nodes x
// 8 GPUs in racks of 8 (250 racks in 25 blocks), 200 shares and 100,000
// pending jobs, beside the same cluster without the topology. The
// cluster is filled as BenchmarkBackfillPass's (one 7-GPU job per node,
// walltimes 1 to 24 hours), so the free GPUs are single GPUs spread over
// every rack; the pending jobs are 1, 2, 4 or 8 GPUs with walltimes, one
// in eight 8-GPU jobs on 2 nodes and one in eight on 4; with topology
// every multi-node job requires one rack and the others are packed by
// rack. Backfill on: each share's first blocked job reserves (in one
// rack for a rack job).
func BenchmarkTopologyPass(b *testing.B) {
	for _, topo := range []bool{false, true} {
		b.Run(fmt.Sprintf("nodes=2000/shares=200/pending=100000/topology=%v", topo), func(b *testing.B) {
			c := newTopoBenchCluster(b, 2000, 200, 100000, topo)
			runtime.GC()
			b.ResetTimer()
			c.fullPasses(b)
			b.ReportMetric(float64(len(c.s.Estimates())), "reservations")
		})
	}
}

func newTopoBenchCluster(b *testing.B, nodes, shares, pending int, topo bool) *benchCluster {
	cfg := Config{Partitions: []Partition{{Name: "p", PreemptionRetries: Unlimited}}, Backfill: true, FairShare: true}
	benchNodes(&cfg, nodes)
	if topo {
		t := Topology{Name: "fab", Levels: []string{"block", "rack"}}
		for bl := 0; bl*80 < nodes; bl++ {
			d := Domain{Level: "block", Name: fmt.Sprintf("b%d", bl)}
			for i := bl * 80; i < min(nodes, bl*80+80); i++ {
				d.Nodes = append(d.Nodes, fmt.Sprintf("n%04d", i))
			}
			t.Domains = append(t.Domains, d)
		}
		for r := 0; r*8 < nodes; r++ {
			d := Domain{Level: "rack", Name: fmt.Sprintf("r%d", r)}
			for i := r * 8; i < min(nodes, r*8+8); i++ {
				d.Nodes = append(d.Nodes, fmt.Sprintf("n%04d", i))
			}
			t.Domains = append(t.Domains, d)
		}
		cfg.Topologies = []Topology{t}
		cfg.Partitions[0].Topology = "fab"
	}
	benchShares(&cfg, shares, nodes*8/shares, false)
	c := startBench(b, cfg, true)
	c.fillNodes(b, nodes, shares)
	for i := 0; i < pending; i++ {
		c.seq++
		jb := Job{
			ID: JobID(fmt.Sprintf("%d.bench", c.seq)), Share: fmt.Sprintf("s%d", c.next()%uint64(shares)), Seq: c.seq,
			Priority: int(c.next() % 4), Nodes: 1, GPUsPerNode: []int{1, 2, 4, 8}[c.next()%4],
			User:     fmt.Sprintf("u%d", c.next()%20),
			Walltime: []time.Duration{10 * time.Minute, time.Hour, 4 * time.Hour, 24 * time.Hour}[c.next()%4],
		}
		if jb.GPUsPerNode == 8 {
			switch c.next() % 8 {
			case 0:
				jb.Nodes = 2
			case 1:
				jb.Nodes = 4
			}
		}
		if topo && jb.Nodes > 1 {
			jb.Topology = TopologyRequest{Level: "rack"}
		}
		if err := c.s.Apply(Submitted{Job: jb}); err != nil {
			b.Fatal(err)
		}
	}
	c.schedule()
	c.schedule()
	return c
}
