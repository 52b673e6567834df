package sim

// flowNet is a flow network for Dinic's maximum flow algorithm, kept as a
// residual graph: edge e's reverse is e^1, res[e] its residual capacity.
// ShareCapBound's feasibility check is its one user; capacities only grow
// between calls to maxFlow (raise), so a flow found once is kept and only
// the extra is searched for.
type flowNet struct {
	head  []int32 // first edge out of each node, -1 for none
	next  []int32 // next edge out of the same node
	to    []int32
	res   []int64
	level []int32
	iter  []int32
	queue []int32
}

// flowInf is an edge capacity no flow reaches.
const flowInf = int64(1) << 60

func newFlowNet(nodes, edges int) *flowNet {
	g := &flowNet{head: make([]int32, nodes), level: make([]int32, nodes), iter: make([]int32, nodes),
		queue: make([]int32, 0, nodes)}
	for i := range g.head {
		g.head[i] = -1
	}
	g.next = make([]int32, 0, 2*edges)
	g.to = make([]int32, 0, 2*edges)
	g.res = make([]int64, 0, 2*edges)
	return g
}

// addEdge adds u→v of capacity c and returns its index.
func (g *flowNet) addEdge(u, v int, c int64) int {
	e := len(g.to)
	g.to = append(g.to, int32(v), int32(u))
	g.res = append(g.res, c, 0)
	g.next = append(g.next, g.head[u], g.head[v])
	g.head[u], g.head[v] = int32(e), int32(e+1)
	return e
}

// raise adds d to edge e's capacity (the flow on it stays).
func (g *flowNet) raise(e int, d int64) { g.res[e] += d }

// maxFlow pushes as much more flow from s to t as the residual graph
// allows and returns how much.
func (g *flowNet) maxFlow(s, t int) int64 {
	var total int64
	for g.levels(int32(s), int32(t)) {
		copy(g.iter, g.head)
		for {
			f := g.push(int32(s), int32(t), flowInf)
			if f == 0 {
				break
			}
			total += f
		}
	}
	return total
}

// levels computes BFS distances from s over edges with residual capacity
// and reports whether t is reachable.
func (g *flowNet) levels(s, t int32) bool {
	for i := range g.level {
		g.level[i] = -1
	}
	g.level[s] = 0
	q := append(g.queue[:0], s)
	for i := 0; i < len(q); i++ {
		u := q[i]
		for e := g.head[u]; e >= 0; e = g.next[e] {
			if v := g.to[e]; g.res[e] > 0 && g.level[v] < 0 {
				g.level[v] = g.level[u] + 1
				q = append(q, v)
			}
		}
	}
	g.queue = q
	return g.level[t] >= 0
}

// push sends up to f from u to t along the level graph (Dinic's blocking
// flow, iter keeping each node's next edge to try) and returns how much.
func (g *flowNet) push(u, t int32, f int64) int64 {
	if u == t {
		return f
	}
	var pushed int64
	for ; g.iter[u] >= 0; g.iter[u] = g.next[g.iter[u]] {
		e := g.iter[u]
		v := g.to[e]
		if g.res[e] <= 0 || g.level[v] != g.level[u]+1 {
			continue
		}
		if d := g.push(v, t, min(f-pushed, g.res[e])); d > 0 {
			g.res[e] -= d
			g.res[e^1] += d
			pushed += d
			if pushed == f {
				return pushed
			}
		}
	}
	g.level[u] = -1 // nothing more gets through u in this phase
	return pushed
}
