package sched

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The property tests of topology-aware placement (topology.go): worlds
// whose partition sits in a drawn topology (racks inside blocks, redrawn
// on reloads), jobs with drawn topology requests, and the oracle's check
// that no start ever breaks a required placement.

// drawTopology puts partition p's nodes in racks of 1 to 3 nodes, and
// pairs of racks in blocks, and draws the partition's default level.
func drawTopology(t *rapid.T, cfg *Config, c *coverage) {
	// NVLink peers on some nodes: GPU i joined to i+2 (nvlink.go).
	for i := range cfg.Nodes {
		n := &cfg.Nodes[i]
		n.GPUPeers = nil
		if n.GPUs >= 3 && rapid.Bool().Draw(t, "nvlink") {
			n.GPUPeers = make([][]int, n.GPUs)
			for g := range n.GPUPeers {
				n.GPUPeers[g] = []int{(g + 2) % n.GPUs}
			}
			c.add("topology nvlink")
		}
	}
	cfg.Topologies = nil
	cfg.Partitions[0].Topology, cfg.Partitions[0].DefaultTopologyLevel = "", ""
	if rapid.IntRange(0, 5).Draw(t, "noTopology") == 0 {
		c.add("topology none")
		return
	}
	topo := Topology{Name: "fabric", Levels: []string{"block", "rack"}}
	var nodes []string
	for _, n := range cfg.Nodes {
		if n.Partition == cfg.Partitions[0].Name {
			nodes = append(nodes, n.Name)
		}
	}
	var block *Domain
	racks := 0
	for i := 0; i < len(nodes); {
		k := min(rapid.IntRange(1, 3).Draw(t, "rackSize"), len(nodes)-i)
		if rapid.IntRange(0, 7).Draw(t, "unracked") == 0 {
			i += k // nodes in no domain
			continue
		}
		rack := Domain{Level: "rack", Name: fmt.Sprintf("r%d", racks), Nodes: nodes[i : i+k : i+k]}
		if racks%2 == 0 {
			topo.Domains = append(topo.Domains, Domain{Level: "block", Name: fmt.Sprintf("b%d", racks/2)})
			block = &topo.Domains[len(topo.Domains)-1]
		}
		block.Nodes = append(block.Nodes, rack.Nodes...)
		topo.Domains = append(topo.Domains, rack)
		block = nil
		for k := range topo.Domains {
			if topo.Domains[k].Name == fmt.Sprintf("b%d", racks/2) {
				block = &topo.Domains[k]
			}
		}
		racks++
		i += k
	}
	cfg.Topologies = []Topology{topo}
	cfg.Partitions[0].Topology = topo.Name
	cfg.Partitions[0].DefaultTopologyLevel = rapid.SampledFrom([]string{"", "", "rack", "block"}).Draw(t, "defaultLevel")
	c.add("topology")
	if cfg.Partitions[0].DefaultTopologyLevel != "" {
		c.add("topology default level")
	}
}

// drawTopoRequest draws a job's topology request: none, required,
// required for a while, preferred, or for a level no topology has.
func (w *world) drawTopoRequest() TopologyRequest {
	t := w.t
	r := TopologyRequest{Level: rapid.SampledFrom([]string{"", "", "rack", "rack", "block", "nosuch"}).Draw(t, "topoLevel")}
	if r.Level == "" {
		return r
	}
	switch rapid.IntRange(0, 3).Draw(t, "topoMode") {
	case 0:
		r.Preferred = true
		w.cov.add("topology request preferred")
	case 1:
		r.Wait = time.Duration(rapid.IntRange(1, 6).Draw(t, "topoWait")) * time.Second
		w.cov.add("topology request bounded")
	default:
		w.cov.add("topology request required")
	}
	return r
}

// domainsOf maps each node of the partition's topology to its domain at
// level in the world's configuration now; ok is false when the
// partition's topology has no such level.
func (w *world) domainsOf(partition, level string) (map[string]string, bool) {
	var topo string
	for _, p := range w.cfg.Partitions {
		if p.Name == partition {
			topo = p.Topology
		}
	}
	for _, t := range w.cfg.Topologies {
		if t.Name != topo || levelIndex(t.Levels, level) < 0 {
			continue
		}
		in := map[string]string{}
		for _, d := range t.Domains {
			if d.Level == level {
				for _, n := range d.Nodes {
					in[n] = d.Name
				}
			}
		}
		return in, true
	}
	return nil, false
}

// checkTopoStart fails the test when a start breaks its job's required
// placement: all its nodes in one domain of the level (a bounded request
// is required at least until its submission plus its wait).
func (w *world) checkTopoStart(st Start, j Job) {
	r := j.Topology
	if r.Level == "" || r.Preferred {
		if r.Level != "" {
			w.cov.add("topology start preferred")
		}
		return
	}
	if r.Wait > 0 && !w.now.Before(j.Submit.Add(r.Wait)) {
		w.cov.add("topology start after wait")
		return
	}
	sc, _ := w.shareCfgOK(st.Share)
	in, ok := w.domainsOf(sc.Partition, r.Level)
	if !ok {
		w.t.Fatalf("start %s: requires %s, which its partition's topology lacks\n%s", st.Job, r.Level, w.dump())
	}
	dom := ""
	for i, a := range st.Allocs {
		d, ok := in[a.Node]
		if !ok || i > 0 && d != dom {
			w.t.Fatalf("start %s on %v: requires one %s; %s is in %q\n%s", st.Job, st.Allocs, r.Level, a.Node, d, w.dump())
		}
		dom = d
	}
	w.cov.add("topology start required")
	if len(st.Allocs) > 1 {
		w.cov.add("topology start required multi-node")
	}
}

// checkTopoReason checks the topology reasons: TopologyNoDomain only
// for a held job that requires a level no domain is big enough for,
// TopologyWaiting only for a job that requires one domain.
func (w *world) checkTopoReason(j Job, r Reason, sc Share, nodes map[string]NodeInfo, bad func(string, ...any)) {
	req := j.Topology
	if req.Level == "" || req.Preferred {
		bad("no required topology (%+v)", req)
	}
	if r == ReasonTopologyWaiting {
		w.cov.add("topology waiting")
		return
	}
	w.cov.add("topology no domain")
	if j.Hold&HoldSystem == 0 {
		bad("no system hold")
	}
	if req.Wait > 0 {
		bad("a bounded request (%v) fits once it is preferred", req.Wait)
	}
	in, ok := w.domainsOf(sc.Partition, req.Level)
	if !ok || j.CPUsPerNode > 1 || j.MemPerNode > 0 {
		return
	}
	count := map[string]int{}
	for _, nc := range w.cfg.Nodes {
		d, ok := in[nc.Name]
		if !ok || nc.Partition != sc.Partition || nodes[nc.Name].GPUs < j.GPUsPerNode {
			continue
		}
		fits := true
		for k, v := range j.Labels {
			fits = fits && nc.Labels[k] == v
		}
		if fits {
			if count[d]++; count[d] >= j.Nodes {
				bad("%s %s holds its %d nodes", req.Level, d, j.Nodes)
			}
		}
	}
}

// runWorldTopo is runWorld in a world with topologies.
func runWorldTopo(t *rapid.T, cov *coverage, walls bool) *world {
	cfg, _ := genConfig(t, false, false)
	drawTopology(t, &cfg, cov)
	if walls {
		cfg.Backfill = true
		cfg.Partitions[0].DefaultWalltime = 20 * time.Second
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, s: s, cfg: cfg, cfg0: cfg, walls: walls, topo: true, now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		o: newOracle(), cov: cov, refusedAt: map[int]bool{}, forgot: map[JobID]bool{}, shrunkCap: map[string]bool{}}
	w.rich = rapid.IntRange(0, 2).Draw(t, "rich") > 0
	w.countConfig(cfg)
	for _, n := range cfg.Nodes {
		w.apply(NodeUp{Node: n.Name})
	}
	steps := rapid.SampledFrom([]int{10, 30, 60, 90}).Draw(t, "steps")
	for i := 0; i < steps; i++ {
		w.step(false)
	}
	w.schedule()
	return w
}

// topoKinds are what every run of the topology worlds must produce.
var topoKinds = []string{
	"topology", "topology none", "topology default level", "topology request required", "topology request preferred",
	"topology request bounded", "topology start required", "topology start required multi-node", "topology start preferred",
	"topology start after wait", "topology waiting", "topology no domain", "plan preempt", "topology nvlink",
}

// TestPropTopology: in worlds with topologies, no start breaks a
// required placement, the topology reasons say what is true, every
// invariant of the other worlds holds, and replays give the same plans.
func TestPropTopology(t *testing.T) {
	propCheck(t, topoKinds, func(t *rapid.T, cov *coverage) {
		w := runWorldTopo(t, cov, false)
		w.replay()
	})
}

// TestPropTopologyBackfill: the same with reservations and walltimes.
func TestPropTopologyBackfill(t *testing.T) {
	propCheck(t, topoKinds, func(t *rapid.T, cov *coverage) {
		w := runWorldTopo(t, cov, true)
		w.replay()
	})
}

// checkTopoHolds fails the test when a nomination or a reservation of a
// job that requires one domain spans several (or sits outside any).
func (w *world) checkTopoHolds() {
	check := func(what string, j *job, allocs []Alloc) {
		r := j.Topology
		if r.Level == "" || r.Preferred || r.Wait > 0 && !w.now.Before(j.Submit.Add(r.Wait)) || j.share == nil {
			return
		}
		sc, _ := w.shareCfgOK(j.Share)
		in, _ := w.domainsOf(sc.Partition, r.Level)
		dom := ""
		for i, a := range allocs {
			d, ok := in[a.Node]
			if !ok || i > 0 && d != dom {
				w.t.Fatalf("%s of %s on %v: requires one %s; %s is in %q\n%s", what, j.ID, allocs, r.Level, a.Node, d, w.dump())
			}
			dom = d
		}
		w.cov.add("topology " + what)
	}
	for _, p := range w.s.parts {
		for _, nm := range p.noms {
			check("nomination", nm.j, nm.allocs)
		}
		for _, r := range p.resvs {
			check("reservation", r.j, r.allocs)
		}
	}
}
