package sched

import "math/bits"

// maxNodeGPUs bounds a node's GPU count so that a GPU set is a fixed-size
// value.
const maxNodeGPUs = 256

// gpuSet is a set of GPU indices on one node.
type gpuSet [maxNodeGPUs / 64]uint64

func (g *gpuSet) set(i int)     { g[i>>6] |= 1 << (uint(i) & 63) }
func (g gpuSet) has(i int) bool { return g[i>>6]&(1<<(uint(i)&63)) != 0 }
func (g gpuSet) isEmpty() bool  { return g == gpuSet{} }
func (g gpuSet) andNot(o gpuSet) gpuSet {
	for i := range g {
		g[i] &^= o[i]
	}
	return g
}
func (g gpuSet) or(o gpuSet) gpuSet {
	for i := range g {
		g[i] |= o[i]
	}
	return g
}
func (g gpuSet) and(o gpuSet) gpuSet {
	for i := range g {
		g[i] &= o[i]
	}
	return g
}

func (g gpuSet) count() int {
	n := 0
	for _, w := range g {
		n += bits.OnesCount64(w)
	}
	return n
}

// firstN returns the set of indices 0..n-1.
func firstN(n int) gpuSet {
	var g gpuSet
	for i := range g {
		switch {
		case n >= 64:
			g[i] = ^uint64(0)
			n -= 64
		case n > 0:
			g[i] = (1 << uint(n)) - 1
			n = 0
		}
	}
	return g
}

func setOf(idx []int) gpuSet {
	var g gpuSet
	for _, i := range idx {
		g.set(i)
	}
	return g
}

// list returns the indices in ascending order.
func (g gpuSet) list() []int {
	out := make([]int, 0, g.count())
	for w, word := range g {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, w*64+b)
			word &^= 1 << uint(b)
		}
	}
	return out
}

// choose picks n indices of g (limit: indices below size), preferring
// adjacent GPUs: the smallest run of consecutive free indices that holds all
// n (lowest start on a tie); when no run is long enough, whole runs from the
// longest down (lowest start on a tie). The result is ascending.
func (g gpuSet) choose(size, n int) []int {
	if n <= 0 {
		return []int{}
	}
	type run struct{ start, n int }
	var runs []run
	for i := 0; i < size; {
		if !g.has(i) {
			i++
			continue
		}
		j := i
		for j < size && g.has(j) {
			j++
		}
		runs = append(runs, run{i, j - i})
		i = j
	}
	best := -1
	for k, r := range runs {
		if r.n >= n && (best < 0 || r.n < runs[best].n) {
			best = k
		}
	}
	out := make([]int, 0, n)
	if best >= 0 {
		for i := 0; i < n; i++ {
			out = append(out, runs[best].start+i)
		}
		return out
	}
	// Stable selection of runs by length, longest first.
	used := make([]bool, len(runs))
	for len(out) < n {
		k := -1
		for i, r := range runs {
			if !used[i] && (k < 0 || r.n > runs[k].n) {
				k = i
			}
		}
		if k < 0 {
			break
		}
		used[k] = true
		for i := 0; i < runs[k].n && len(out) < n; i++ {
			out = append(out, runs[k].start+i)
		}
	}
	sortInts(out)
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
