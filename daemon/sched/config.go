package sched

import (
	"fmt"
	"sort"
)

// validate checks a configuration: names unique and non-empty, every node
// and share in a known partition, counts in range.
func validate(cfg Config) error {
	parts := map[string]bool{}
	for _, p := range cfg.Partitions {
		if p.Name == "" {
			return fmt.Errorf("%w: partition without a name", ErrInvalid)
		}
		if parts[p.Name] {
			return fmt.Errorf("%w: duplicate partition %q", ErrInvalid, p.Name)
		}
		if p.PreemptionRetries < Unlimited {
			return fmt.Errorf("%w: partition %q: preemption retries %d", ErrInvalid, p.Name, p.PreemptionRetries)
		}
		if p.NodeFailureRetries < Unlimited {
			return fmt.Errorf("%w: partition %q: node failure retries %d", ErrInvalid, p.Name, p.NodeFailureRetries)
		}
		if p.StartFailureRetries < Unlimited {
			return fmt.Errorf("%w: partition %q: start failure retries %d", ErrInvalid, p.Name, p.StartFailureRetries)
		}
		if p.DefaultWalltime < 0 || p.DefaultWalltime > MaxWalltime {
			return fmt.Errorf("%w: partition %q: default walltime %v", ErrInvalid, p.Name, p.DefaultWalltime)
		}
		if p.PreemptGrace < 0 || p.PreemptGrace > MaxWalltime || p.MaxPreemptGrace < 0 || p.MaxPreemptGrace > MaxWalltime {
			return fmt.Errorf("%w: partition %q: grace %v, max %v (0..%v)", ErrInvalid, p.Name, p.PreemptGrace, p.MaxPreemptGrace, MaxWalltime)
		}
		if len(p.DefaultImage) > maxImageLen {
			return fmt.Errorf("%w: partition %q: default image of %d bytes (at most %d)", ErrInvalid, p.Name, len(p.DefaultImage), maxImageLen)
		}
		if p.NeverFitsFailAfter < 0 || p.NeverFitsFailAfter > maxNeverFitsFailAfter {
			return fmt.Errorf("%w: partition %q: never fits fail after %v (0..%v)", ErrInvalid, p.Name, p.NeverFitsFailAfter, maxNeverFitsFailAfter)
		}
		parts[p.Name] = true
	}
	nodes := map[string]bool{}
	for _, n := range cfg.Nodes {
		switch {
		case n.Name == "":
			return fmt.Errorf("%w: node without a name", ErrInvalid)
		case nodes[n.Name]:
			return fmt.Errorf("%w: duplicate node %q", ErrInvalid, n.Name)
		case !parts[n.Partition]:
			return fmt.Errorf("%w: node %q: unknown partition %q", ErrInvalid, n.Name, n.Partition)
		case n.GPUs < 0 || n.GPUs > maxNodeGPUs:
			return fmt.Errorf("%w: node %q: %d GPUs (0..%d)", ErrInvalid, n.Name, n.GPUs, maxNodeGPUs)
		case n.CPUs < 0 || n.MemBytes < 0:
			return fmt.Errorf("%w: node %q: negative CPUs or memory", ErrInvalid, n.Name)
		}
		nodes[n.Name] = true
	}
	if cfg.UsageHalfLife < 0 || cfg.UsageHalfLife > maxHalfLife || (cfg.UsageHalfLife > 0 && cfg.UsageHalfLife < minHalfLife) {
		return fmt.Errorf("%w: usage half-life %v (%v..%v)", ErrInvalid, cfg.UsageHalfLife, minHalfLife, maxHalfLife)
	}
	if cfg.FairPreemptionAfter < 0 || cfg.FairPreemptionAfter > maxFairPreemptionAfter {
		return fmt.Errorf("%w: fair preemption after %v (0..%v)", ErrInvalid, cfg.FairPreemptionAfter, maxFairPreemptionAfter)
	}
	shares := map[string]bool{}
	for _, s := range cfg.Shares {
		switch {
		case s.Name == "":
			return fmt.Errorf("%w: share without a name", ErrInvalid)
		case shares[s.Name]:
			return fmt.Errorf("%w: duplicate share %q", ErrInvalid, s.Name)
		case !parts[s.Partition]:
			return fmt.Errorf("%w: share %q: unknown partition %q", ErrInvalid, s.Name, s.Partition)
		case s.GPUs < 0:
			return fmt.Errorf("%w: share %q: negative quota", ErrInvalid, s.Name)
		case s.Strategy > LendAndBorrow:
			return fmt.Errorf("%w: share %q: strategy %v", ErrInvalid, s.Name, s.Strategy)
		case s.BorrowLimit < Unlimited:
			return fmt.Errorf("%w: share %q: borrow limit %d", ErrInvalid, s.Name, s.BorrowLimit)
		case s.FairWeight < 0 || s.FairWeight > maxFairWeight:
			return fmt.Errorf("%w: share %q: fair weight %d (0..%d)", ErrInvalid, s.Name, s.FairWeight, maxFairWeight)
		case s.MaxRunningJobsPerUser < 0 || s.MaxGPUsPerUser < 0:
			return fmt.Errorf("%w: share %q: negative per-user limit", ErrInvalid, s.Name)
		}
		shares[s.Name] = true
	}
	return validateTopologies(cfg)
}

func cloneConfig(cfg Config) Config {
	c := cfg
	c.Partitions = append([]Partition(nil), cfg.Partitions...)
	c.Nodes = append([]Node(nil), cfg.Nodes...)
	c.Shares = append([]Share(nil), cfg.Shares...)
	c.Topologies = cloneTopologies(cfg.Topologies)
	return c
}

// sortedJobs returns every job in a fixed order.
func (s *Scheduler) sortedJobs() []*job {
	all := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		all = append(all, j)
	}
	sort.Slice(all, func(a, b int) bool {
		x, y := all[a], all[b]
		if x.Seq != y.Seq {
			return x.Seq < y.Seq
		}
		return x.ID < y.ID
	})
	return all
}

// install builds every derived structure for cfg from the jobs the core
// holds. Nominations are released (the next pass plans again); running jobs
// keep their GPUs, on ghost nodes if their node was removed; jobs of removed
// shares are kept under ghost shares.
func (s *Scheduler) install(cfg Config) {
	for _, p := range s.parts {
		for len(p.noms) > 0 {
			s.releaseNom(p.noms[len(p.noms)-1])
		}
	}
	oldNodes, oldShares := s.nodeByName, s.shareByName
	s.cfg = cloneConfig(cfg)
	s.rates.all = true // new shares (rates.go)
	s.parts = nil
	s.partByName = map[string]*partition{}
	for i, pc := range cfg.Partitions {
		p := &partition{cfg: pc, idx: i, dirty: true}
		s.parts = append(s.parts, p)
		s.partByName[pc.Name] = p
	}
	s.nodes = nil
	s.nodeByName = map[string]*node{}
	for i, nc := range cfg.Nodes {
		n := &node{cfg: nc, idx: i, gpus: nc.GPUs, bucket: -1}
		if o := oldNodes[nc.Name]; o != nil && !o.ghost {
			n.up, n.drain, n.fenced = o.up, o.drain, o.fenced
			n.repCPU, n.repMem = o.repCPU, o.repMem
			if o.cfg.GPUs == nc.GPUs && o.gpus != o.cfg.GPUs {
				n.gpus = o.gpus // the count NodeUp reported still holds
			}
		}
		n.resetValid()
		n.cpus, n.mem = n.capacity()
		p := s.partByName[nc.Partition]
		n.part, n.pidx = p, len(p.nodes)
		p.nodes = append(p.nodes, n)
		s.nodes = append(s.nodes, n)
		s.nodeByName[nc.Name] = n
	}
	s.shares = nil
	s.shareByName = map[string]*share{}
	for i, sc := range cfg.Shares {
		sh := &share{cfg: sc, idx: i}
		sh.q.perUser = perUser(sc)
		p := s.partByName[sc.Partition]
		sh.part = p
		p.shares = append(p.shares, sh)
		if sc.Strategy == Reserve {
			p.reserveQuota += sc.GPUs
			p.reserveIdle += sc.GPUs
		} else {
			p.nonRQuota += sc.GPUs
		}
		s.shares = append(s.shares, sh)
		s.shareByName[sc.Name] = sh
	}
	s.installTopology()
	all := s.sortedJobs()
	for _, j := range all {
		j.resv = nil // the nodes they were on are gone; the next pass reserves again
		if s.shareByName[j.Share] == nil {
			s.ghostShare(j.Share, oldShares[j.Share])
		}
		if !j.holding() {
			continue
		}
		for _, a := range j.allocs {
			if s.nodeByName[a.Node] == nil {
				s.ghostNode(a.Node, oldNodes[a.Node])
			}
		}
	}
	for _, p := range s.parts {
		s.initBuckets(p)
		computeAtLeast(p)
		recountAccounts(p)
	}
	for _, j := range all {
		j.share = s.shareByName[j.Share]
		if j.holding() {
			j.anodes = j.anodes[:0]
			for _, a := range j.allocs {
				j.anodes = append(j.anodes, s.nodeByName[a.Node])
			}
			s.hold(j)
			continue
		}
		if j.state == Pending {
			j.inReady = false
			j.share.pending++
		}
	}
	for _, n := range s.nodes {
		s.nodeRefresh(n)
	}
	for _, j := range all {
		if j.state != Pending {
			continue
		}
		s.checkNeverFits(j, holdOrRelease)
		s.refresh(j)
	}
}

func (s *Scheduler) ghostShare(name string, old *share) *share {
	sh := &share{cfg: Share{Name: name}, idx: len(s.shares), removed: true}
	if old != nil {
		sh.cfg = old.cfg
	}
	if p := s.partByName[sh.cfg.Partition]; p != nil {
		sh.part = p
		p.shares = append(p.shares, sh)
	}
	s.shares = append(s.shares, sh)
	s.shareByName[name] = sh
	s.markRates(sh)
	return sh
}

func (s *Scheduler) ghostNode(name string, old *node) *node {
	n := &node{cfg: Node{Name: name}, idx: len(s.nodes), ghost: true, bucket: -1}
	if old != nil {
		n.cfg, n.gpus = old.cfg, old.gpus
		n.repCPU, n.repMem, n.cpus, n.mem = old.repCPU, old.repMem, old.cpus, old.mem
	}
	n.resetValid()
	s.nodes = append(s.nodes, n)
	s.nodeByName[name] = n
	return n
}

// initBuckets sizes a partition's free-count index for its nodes.
func (s *Scheduler) initBuckets(p *partition) {
	p.maxGPUs = 0
	for _, n := range p.nodes {
		if n.gpus > p.maxGPUs {
			p.maxGPUs = n.gpus
		}
	}
	words := (len(p.nodes) + 63) / 64
	for len(p.buckets) <= p.maxGPUs {
		p.buckets = append(p.buckets, make([]uint64, words))
		p.bucketN = append(p.bucketN, 0)
	}
}
