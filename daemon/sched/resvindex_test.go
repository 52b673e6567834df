package sched

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestResvIndexPick checks the index's choice of nodes against the walk
// reserveFrom does without it: for random node times (ties, nodes that are
// never free), requests of k nodes and earliest starts, the same nodes
// with the same times in the same order.
func TestResvIndexPick(t *testing.T) {
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "nodes")
		size := 1
		for size < n {
			size *= 2
		}
		ri := &resvIndex{size: size}
		tr := &timeTree{t: make([]time.Time, size), inf: make([]bool, size), win: make([]int32, 2*size)}
		nodes := make([]*node, n)
		for i := range tr.inf {
			tr.t[i], tr.inf[i] = forever, true
		}
		for i := range nodes {
			nodes[i] = &node{pidx: i}
			if rapid.IntRange(0, 4).Draw(t, "never") > 0 {
				tr.t[i], tr.inf[i] = base.Add(time.Duration(rapid.IntRange(-3, 8).Draw(t, "t"))*time.Hour), false
			}
		}
		for i := 0; i < size; i++ {
			tr.win[size+i] = int32(i)
		}
		for k := size - 1; k >= 1; k-- {
			tr.win[k] = tr.lesser(tr.win[2*k], tr.win[2*k+1])
		}
		for q := 0; q < 5; q++ {
			k := rapid.IntRange(1, 6).Draw(t, "k")
			nb := base.Add(time.Duration(rapid.IntRange(0, 6).Draw(t, "nb")) * time.Hour)
			got := ri.pick(tr, nodes, k, nb)
			want := walkPick(tr, nodes, k, nb)
			if len(got) != len(want) {
				t.Fatalf("k=%d nb=%v: index picked %d nodes, the walk %d", k, nb, len(got), len(want))
			}
			for i := range got {
				if got[i].n != want[i].n || !got[i].t.Equal(want[i].t) {
					t.Fatalf("k=%d nb=%v: index picked %v, the walk %v", k, nb, cands(got), cands(want))
				}
			}
		}
	})
}

// walkPick is reserveFrom's walk over the nodes.
func walkPick(tr *timeTree, nodes []*node, k int, nb time.Time) []resvCand {
	best := make([]resvCand, 0, k)
	for _, n := range nodes {
		t, ok := tr.t[n.pidx], !tr.inf[n.pidx]
		if t.Before(nb) {
			t = nb
		}
		if !ok || (len(best) == k && !t.Before(best[k-1].t)) {
			continue
		}
		i := len(best)
		if i < k {
			best = append(best, resvCand{})
		} else {
			i = k - 1
		}
		for i > 0 && t.Before(best[i-1].t) {
			best[i] = best[i-1]
			i--
		}
		best[i] = resvCand{n, t}
	}
	return best
}

func cands(list []resvCand) []string {
	var out []string
	for _, c := range list {
		out = append(out, c.t.Format("15:04")+"@"+string(rune('A'+c.n.pidx)))
	}
	return out
}
