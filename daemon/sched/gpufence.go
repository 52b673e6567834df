package sched

import (
	"fmt"
	"slices"
)

// GPUsFenced sets the GPUs of a node that no new job may get: the driver
// fences a GPU its node daemon reports sick (an Xid, a double-bit ECC
// error, a row-remap failure, a GPU that fell off the bus) until an admin
// clears it. GPUs is the whole fenced set (empty: none). A job that holds
// a fenced GPU keeps it until it ends or the driver requeues it; no
// nomination or reservation keeps a fenced GPU, and the partition's
// capacity leaves it out.
type GPUsFenced struct {
	Node string
	GPUs []int
}

func (GPUsFenced) isEvent() {}

// resetValid recomputes the GPUs that may be given: the node's count less
// its fenced ones.
func (n *node) resetValid() { n.valid = firstN(n.gpus).andNot(n.fenced) }

func (s *Scheduler) gpusFenced(e GPUsFenced) error {
	n, err := s.lookupNode(e.Node)
	if err != nil {
		return err
	}
	var f gpuSet
	for _, i := range e.GPUs {
		if i < 0 || i >= maxNodeGPUs {
			return fmt.Errorf("%w: node %s: GPU %d (0..%d)", ErrInvalid, e.Node, i, maxNodeGPUs-1)
		}
		f.set(i)
	}
	if f == n.fenced {
		return nil
	}
	added := !f.andNot(n.fenced).isEmpty()
	n.fenced = f
	if added {
		// A nomination may hold a GPU that is fenced now: its preemptor
		// plans again.
		s.releaseNomsOn(n)
	}
	n.resetValid()
	s.nodeRefresh(n)
	n.part.dirty = true
	return nil
}

// FencedGPUs returns the fenced GPUs of a node, ascending (nil for an
// unknown node or none).
func (s *Scheduler) FencedGPUs(node string) []int {
	n := s.nodeByName[node]
	if n == nil || n.fenced.isEmpty() {
		return nil
	}
	return slices.Clip(n.fenced.list())
}
