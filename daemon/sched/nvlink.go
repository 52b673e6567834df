package sched

import "fmt"

// NVLink peers inside a node (issue 33 item 4). A node's GPUPeers (from
// the configuration, or as its NVML reported them in NodeUp) say which of
// its GPUs NVLink joins directly. A job of several GPUs on such a node
// gets, of the GPUs free to it, a set with the most NVLink pairs among
// them; on a tie, or on a node without peers (every GPU behind one
// NVSwitch reads as none), the adjacent indices gpuSet.choose picks,
// which follow the PCIe bus order.

// nodePeers is a node's NVLink peers by GPU index; nil when none known.
func (s *Scheduler) nodePeers(n *node) []gpuSet {
	if p, ok := s.topo.reported[n.cfg.Name]; ok {
		return p
	}
	if n.idx < len(s.topo.declared) {
		return s.topo.declared[n.idx]
	}
	return nil
}

// peerSets turns peer lists into sets, keeping links both ways.
func peerSets(peers [][]int) []gpuSet {
	if len(peers) == 0 {
		return nil
	}
	out := make([]gpuSet, len(peers))
	for i, ps := range peers {
		for _, p := range ps {
			if p == i || p < 0 || p >= len(peers) {
				continue
			}
			out[i].set(p)
			out[p].set(i)
		}
	}
	return out
}

// checkPeers bounds a node's peer lists.
func checkPeers(node string, peers [][]int) error {
	if len(peers) > maxNodeGPUs {
		return fmt.Errorf("%w: node %s: NVLink peers of %d GPUs (at most %d)", ErrInvalid, node, len(peers), maxNodeGPUs)
	}
	for i, ps := range peers {
		if len(ps) > maxNodeGPUs {
			return fmt.Errorf("%w: node %s: GPU %d has %d NVLink peers", ErrInvalid, node, i, len(ps))
		}
		for _, p := range ps {
			if p < 0 || p >= len(peers) {
				return fmt.Errorf("%w: node %s: GPU %d's NVLink peer %d is not one of its %d GPUs", ErrInvalid, node, i, p, len(peers))
			}
		}
	}
	return nil
}

// maxLinkSearch bounds the nodes chooseGPUs searches for NVLink sets
// (its cost grows with the cube of the free GPUs): larger ones, if any,
// get the adjacent choice.
const maxLinkSearch = 64

// chooseGPUs picks g of avail on n: the set with the most NVLink pairs,
// grown greedily from each free GPU (the GPU with the most links into
// the set next, the lowest index on a tie); the adjacent choice when it
// has as many pairs. Ascending.
func (s *Scheduler) chooseGPUs(n *node, avail gpuSet, g int) []int {
	plain := avail.choose(n.gpus, g)
	peers := s.nodePeers(n)
	if g < 2 || len(peers) == 0 || len(plain) < g || n.gpus > maxLinkSearch {
		return plain
	}
	pairs := func(set gpuSet) int {
		k := 0
		for _, i := range set.list() {
			if i < len(peers) {
				k += peers[i].and(set).count()
			}
		}
		return k / 2
	}
	var best gpuSet
	bestPairs := pairs(setOf(plain))
	free := avail.list()
	for _, seed := range free {
		if seed >= n.gpus {
			break
		}
		var set gpuSet
		set.set(seed)
		for k := 1; k < g; k++ {
			pick, links := -1, -1
			for _, j := range free {
				if j >= n.gpus || set.has(j) {
					continue
				}
				l := 0
				if j < len(peers) {
					l = peers[j].and(set).count()
				}
				if l > links {
					pick, links = j, l
				}
			}
			set.set(pick)
		}
		if p := pairs(set); p > bestPairs {
			best, bestPairs = set, p
		}
	}
	if best.isEmpty() {
		return plain
	}
	return best.list()
}
