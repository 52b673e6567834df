package sched

import "math/bits"

// fairReach says whether at least j.Nodes usable nodes of p could hold
// j.GPUsPerNode GPUs once fair preemption's candidates left: free GPUs
// (less the reserved ones the current masks keep j off), spare GPUs and
// what the candidates free there (onNode, by pidx). It is fairHopeless's
// last test. Walking every node of the partition for it, at every blocked
// borrower of every share, was the largest part of a pass at 2,000 nodes;
// without spare GPUs (p.spare is 0) only the nodes the candidates free
// GPUs on and the nodes with free GPUs (the free-count buckets) can hold
// any, so only those are looked at. The count is the same. onNode is
// spoilt (the caller is done with it).
func (s *Scheduler) fairReach(p *partition, j *job, cands []*job, onNode []int) bool {
	g, want := j.GPUsPerNode, j.Nodes
	nodes := 0
	if g <= 0 || p.spare != 0 {
		for _, n := range p.nodes {
			if n.usable() && s.freeOn(n)+n.spare+onNode[n.pidx] >= g {
				if nodes++; nodes >= want {
					return true
				}
			}
		}
		return false
	}
	for _, v := range cands {
		for _, n := range v.anodes {
			if n.part != p || !n.usable() || onNode[n.pidx] <= 0 {
				continue
			}
			if s.freeOn(n)+onNode[n.pidx] >= g {
				if nodes++; nodes >= want {
					return true
				}
			}
			onNode[n.pidx] = -1 // counted
		}
	}
	for b := 1; b < len(p.buckets); b++ {
		for w, word := range p.buckets[b] {
			for word != 0 {
				i := w*64 + bits.TrailingZeros64(word)
				word &= word - 1
				if onNode[i] < 0 {
					continue // counted with the candidates'
				}
				if s.freeOn(p.nodes[i])+onNode[i] >= g {
					if nodes++; nodes >= want {
						return true
					}
				}
			}
		}
	}
	return false
}
