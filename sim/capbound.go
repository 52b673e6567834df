package sim

import (
	"cmp"
	"slices"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// maxBoundIntervals is how many time intervals ShareCapBound's flow
// network has per partition at most. With more distinct submission
// seconds, submissions are moved back to a grid of span/maxBoundIntervals
// (rounded up to whole seconds): that only loosens the bound, by at most one
// grid step (a schedule of the moved trace started one step later is one
// of the real trace): about 40 minutes on the ITP trace's 60 days of
// submissions, where the network's end equals a share's own fluid end
// anyway (with every submission second, 60,000 intervals, it takes
// seconds instead of milliseconds and finds the same end).
const maxBoundIntervals = 2048

// ShareCapBound computes the trace's Bound within the configuration's
// share caps: the best any schedule under this configuration can do. Every
// job's share must be in the cluster (ValidateTrace).
//
// It keeps what WorkConservingBound keeps (no job ends before its
// submission plus its run time; at most the GPUs there are) and adds the
// caps the core enforces at every moment, each share's and each
// partition's:
//
//   - a share's jobs run only on its partition's GPUs;
//   - a RESERVE or LEND share holds at most its quota, a LEND_AND_BORROW
//     share at most its quota plus borrow_limit percent of it (rounded
//     down; no cap with borrow_limit = -1), never more than its partition
//     (shareCap);
//   - a partition's non-RESERVE shares hold at most max(the partition's
//     GPUs − its RESERVE quotas, their quotas) together (the core's pool:
//     RESERVE shares' idle quota is lent to nobody).
//
// Everything else is relaxed: jobs are fluid within those caps (a job's
// GPU-seconds may run on any of its partition's GPUs, in any pieces and at
// any rate, so node shapes, fragmentation and CPUs do not matter), nothing
// is preempted (no grace time, no lost work), nobody waits for a
// reservation, a priority, fair share or per-user limits, and nodes never
// go down. Jobs that can never start are left out: more nodes of their size
// than the partition has, or more GPUs than their share's cap.
//
// End is the latest of
//
//   - WorkConservingBound's two ends over the same jobs (the fluid end on
//     all of the cluster's GPUs, every job's submission plus run time);
//   - each partition's, share's and pool's own fluid end, its work drained
//     at its cap from each submission on;
//   - the exact end of this fluid relaxation per partition: the least T
//     such that a flow network over the partition's time intervals (from
//     each distinct submission second to the next, the last one to T)
//     carries all its work: each share's work enters at its submission's
//     interval, may be carried to later ones, and leaves an interval
//     through the share's cap × its length, then the pool's, then the
//     partition's GPUs × its length. The fluid ends above are single cuts
//     of this network; it also finds the ends that come from several
//     shares' caps together (a capped share's backlog keeps GPUs from a
//     share that comes later). Submissions and work count in whole
//     seconds, rounded down, on a grid of at most maxBoundIntervals
//     intervals (both only loosen it). T is bisected to the second, each
//     step a maximum flow (Dinic's, from a greedy schedule's flow, and
//     warm-started from the last infeasible step's: only the last
//     interval grows); within the last second, the minimum cut's growth
//     rate gives T (never above the least end, and equal to it unless
//     the minimum cut changes within that second).
//
// With one partition whose shares' caps are all of it (every share
// LEND_AND_BORROW without a limit, and no RESERVE share) it equals
// WorkConservingBound.
func ShareCapBound(jobs []TraceJob, cl *Cluster) Bound {
	parts := map[string]*capPart{}
	var order []*capPart
	for _, nd := range cl.Sched.Nodes {
		p := parts[nd.Partition]
		if p == nil {
			p = &capPart{shareIdx: map[string]int{}}
			parts[nd.Partition] = p
			order = append(order, p)
		}
		p.gpus += nd.GPUs
	}
	for i := range cl.Sched.Shares {
		s := &cl.Sched.Shares[i]
		p := parts[s.Partition]
		if p == nil {
			continue // a partition without nodes: its jobs never start
		}
		if s.Strategy == sched.Reserve {
			p.reserveQuota += s.GPUs
		} else {
			p.nonRQuota += s.GPUs
		}
	}
	for _, p := range order {
		p.pool = min(p.gpus, max(p.gpus-p.reserveQuota, p.nonRQuota))
	}
	for i := range cl.Sched.Shares {
		s := &cl.Sched.Shares[i]
		p := parts[s.Partition]
		if p == nil {
			continue
		}
		p.shareIdx[s.Name] = len(p.shares)
		p.shares = append(p.shares, capShare{cap: shareCap(s, p.gpus, p.pool), reserve: s.Strategy == sched.Reserve})
	}

	idx := make([]int, 0, len(jobs))
	fit := newNodeFit(cl)
	for i := range jobs {
		j := &jobs[i]
		s := cl.share(j.Share)
		if s == nil || parts[s.Partition] == nil || !fit.fits(j) {
			continue
		}
		p := parts[s.Partition]
		if j.TotalGPUs() > p.shares[p.shareIdx[s.Name]].cap {
			continue
		}
		idx = append(idx, i)
	}
	gpus := cl.TotalGPUs()
	b, work := gpuBound(jobs, idx, gpus, func(j *TraceJob, w float64) {
		p := parts[cl.share(j.Share).Partition]
		p.add(j, p.shareIdx[j.Share], w)
	})
	if len(idx) == 0 || gpus <= 0 {
		return b
	}
	for _, p := range order {
		b.End = max(b.End, p.end())
	}
	b.finish(work, gpus)
	return b
}

// capPart is one partition's part of ShareCapBound.
type capPart struct {
	gpus, pool              int
	reserveQuota, nonRQuota int
	shareIdx                map[string]int
	shares                  []capShare
	whole, poolQ            fluid
	jobs                    []capJob // in submission order
}

type capShare struct {
	cap     int
	reserve bool
	q       fluid
	work    int64 // GPU-seconds, whole seconds of run time
}

// capJob is a job as the flow network counts it: its submission and work
// in whole seconds, rounded down (which only loosens the bound).
type capJob struct {
	at    int64 // submission, s
	work  int64 // GPU-seconds
	share int
}

func (p *capPart) add(j *TraceJob, k int, w float64) {
	sh := &p.shares[k]
	p.whole.add(j.Submit, w, float64(p.gpus))
	if !sh.reserve {
		p.poolQ.add(j.Submit, w, float64(p.pool))
	}
	sh.q.add(j.Submit, w, float64(sh.cap))
	cj := capJob{at: int64(j.Submit / time.Second), work: int64(j.TotalGPUs()) * int64(j.Duration/time.Second), share: k}
	sh.work += cj.work
	p.jobs = append(p.jobs, cj)
}

// end is the partition's end: its own fluid ends and the flow network's.
func (p *capPart) end() time.Duration {
	if len(p.jobs) == 0 {
		return 0
	}
	e := max(p.whole.end(float64(p.gpus)), p.poolQ.end(float64(p.pool)))
	for i := range p.shares {
		e = max(e, p.shares[i].q.end(float64(p.shares[i].cap)))
	}
	return p.flowEnd(e)
}

// flowEnd is the least end at which the partition's flow network carries
// all of its work, given lo, a lower bound of it (the fluid ends).
func (p *capPart) flowEnd(lo time.Duration) time.Duration {
	n := p.network(int64(lo / time.Second))
	last, L := n.times[len(n.times)-1], n.lastL
	if n.work == 0 {
		return 0
	}
	flow := n.work - n.missing()
	if flow += n.g.maxFlow(n.src, n.sink); flow == n.work {
		return lo // then the least end is lo
	}
	// Feasible: after the last submission, the shares one after the
	// other, each at its cap.
	var hi int64
	for i := range p.shares {
		if w := p.shares[i].work; w > 0 {
			hi += (w + int64(p.shares[i].cap) - 1) / int64(p.shares[i].cap)
		}
	}
	hi = max(hi, L+1)
	base := slices.Clone(n.g.res)
	for hi-L > 1 {
		mid := L + (hi-L)/2
		n.setLast(mid)
		if flow+n.g.maxFlow(n.src, n.sink) == n.work {
			hi = mid
			copy(n.g.res, base)
			n.lastL = L
			continue
		}
		L, flow = mid, n.work-n.missing()
		copy(base, n.g.res)
	}
	// The least end is in (last+L, last+hi]. The residual graph of the
	// flow at L (n.g.res is base again) gives a minimum cut; its capacity
	// grows by rate GPU-seconds per second of the last interval, and no
	// flow exceeds a cut's capacity: the work is not done before the cut
	// has grown by what is missing (exact while that cut stays minimal).
	n.g.levels(int32(n.src), int32(n.sink))
	var rate int64
	for i, e := range n.lastEdges {
		if n.g.level[n.g.to[e^1]] >= 0 && n.g.level[n.g.to[e]] < 0 {
			rate += n.lastRates[i]
		}
	}
	end := float64(last + L)
	if rate > 0 {
		end += min(float64(n.work-flow)/float64(rate), float64(hi-L))
	}
	return max(lo, time.Duration(end*float64(time.Second)))
}

// capNet is a partition's flow network: source → (share, interval) with
// the work submitted then; (share, k) → (share, k+1) unbounded (work
// carried); (share, k) → pool_k (RESERVE shares: → part_k) at the share's
// cap × the interval's length; pool_k → part_k at the pool's; part_k →
// sink at the partition's GPUs × the length. The last interval runs from
// the last submission for lastL seconds.
type capNet struct {
	g          *flowNet
	src, sink  int
	work       int64
	times      []int64 // interval starts, s
	lastEdges  []int   // the last interval's rate edges
	lastRates  []int64 // their GPUs
	lastL      int64
	sourceEdge []int
}

// missing is the work the current flow leaves at the source.
func (n *capNet) missing() int64 {
	var m int64
	for _, e := range n.sourceEdge {
		m += n.g.res[e]
	}
	return m
}

// setLast makes the last interval l seconds long (never shorter than it
// was: capacities only grow).
func (n *capNet) setLast(l int64) {
	if d := l - n.lastL; d > 0 {
		for i, e := range n.lastEdges {
			n.g.raise(e, d*n.lastRates[i])
		}
		n.lastL = l
	}
}

// network builds the partition's network with its last interval ending
// at end (s; not before it begins), carrying the flow of a greedy fluid schedule (each interval
// serves first the shares furthest behind at their own cap), which
// maxFlow then completes.
func (p *capPart) network(end int64) *capNet {
	first, last := p.jobs[0].at, p.jobs[len(p.jobs)-1].at
	step := int64(1)
	distinct := 1
	for i := 1; i < len(p.jobs); i++ {
		if p.jobs[i].at != p.jobs[i-1].at {
			distinct++
		}
	}
	if distinct > maxBoundIntervals {
		step = (last - first + maxBoundIntervals) / maxBoundIntervals
	}
	slot := func(at int64) int64 { return first + (at-first)/step*step }
	var times []int64
	for _, j := range p.jobs {
		if t := slot(j.at); len(times) == 0 || times[len(times)-1] != t {
			times = append(times, t)
		}
	}
	K, S := len(times), len(p.shares)
	lastL := max(0, end-times[K-1])
	// Nodes: source, sink, part_k, pool_k, then (share, k) for every share
	// with work from its first interval on.
	firstK := make([]int, S)
	for i := range firstK {
		firstK[i] = -1
	}
	work := make([]int64, S*K)
	k := 0
	for _, j := range p.jobs {
		for times[k] != slot(j.at) {
			k++
		}
		if firstK[j.share] < 0 {
			firstK[j.share] = k
		}
		work[j.share*K+k] += j.work
	}
	nodeOf := make([]int, S) // nodeOf[s]+k is (share s, interval k)
	nodes := 2 + 2*K
	for s := range S {
		if firstK[s] >= 0 {
			nodeOf[s] = nodes - firstK[s]
			nodes += K - firstK[s]
		}
	}
	n := &capNet{g: newFlowNet(nodes, nodes*3), src: 0, sink: 1, times: times, lastL: lastL}
	part := func(k int) int { return 2 + k }
	pool := func(k int) int { return 2 + K + k }
	length := func(k int) int64 {
		if k == K-1 {
			return lastL
		}
		return times[k+1] - times[k]
	}
	usePool := p.pool < p.gpus
	partE, poolE := make([]int, K), make([]int, K)
	for k := range K {
		partE[k] = n.g.addEdge(part(k), n.sink, int64(p.gpus)*length(k))
		if usePool {
			poolE[k] = n.g.addEdge(pool(k), part(k), int64(p.pool)*length(k))
		}
		if k == K-1 {
			n.lastEdges, n.lastRates = append(n.lastEdges, partE[k]), append(n.lastRates, int64(p.gpus))
			if usePool {
				n.lastEdges, n.lastRates = append(n.lastEdges, poolE[k]), append(n.lastRates, int64(p.pool))
			}
		}
	}
	srcE, carryE, rateE := make([]int, S*K), make([]int, S*K), make([]int, S*K)
	for s := range S {
		if firstK[s] < 0 {
			continue
		}
		sh := &p.shares[s]
		for k := firstK[s]; k < K; k++ {
			v := nodeOf[s] + k
			srcE[s*K+k], carryE[s*K+k] = -1, -1
			if w := work[s*K+k]; w > 0 {
				srcE[s*K+k] = n.g.addEdge(n.src, v, w)
				n.sourceEdge = append(n.sourceEdge, srcE[s*K+k])
				n.work += w
			}
			if k+1 < K {
				carryE[s*K+k] = n.g.addEdge(v, v+1, flowInf)
			}
			out := part(k)
			if usePool && !sh.reserve {
				out = pool(k)
			}
			rateE[s*K+k] = n.g.addEdge(v, out, int64(sh.cap)*length(k))
			if k == K-1 {
				n.lastEdges, n.lastRates = append(n.lastEdges, rateE[s*K+k]), append(n.lastRates, int64(sh.cap))
			}
		}
	}

	// The greedy schedule's flow.
	send := func(e int, f int64) { n.g.res[e] -= f; n.g.res[e^1] += f }
	backlog := make([]int64, S)
	byNeed := make([]int, 0, S)
	for k := range K {
		byNeed = byNeed[:0]
		for s := range S {
			if firstK[s] < 0 || k < firstK[s] {
				continue
			}
			if e := srcE[s*K+k]; e >= 0 {
				send(e, work[s*K+k])
				backlog[s] += work[s*K+k]
			}
			if backlog[s] > 0 && p.shares[s].cap > 0 {
				byNeed = append(byNeed, s)
			}
		}
		slices.SortFunc(byNeed, func(a, b int) int { // backlog/cap, descending
			return cmp.Compare(float64(backlog[b])/float64(p.shares[b].cap), float64(backlog[a])/float64(p.shares[a].cap))
		})
		L := length(k)
		partLeft, poolLeft := int64(p.gpus)*L, int64(p.pool)*L
		for _, s := range byNeed {
			sh := &p.shares[s]
			x := min(backlog[s], int64(sh.cap)*L, partLeft)
			if usePool && !sh.reserve {
				x = min(x, poolLeft)
				poolLeft -= x
			}
			send(rateE[s*K+k], x)
			backlog[s] -= x
			partLeft -= x
		}
		send(partE[k], int64(p.gpus)*L-partLeft)
		if usePool {
			send(poolE[k], int64(p.pool)*L-poolLeft)
		}
		if k+1 < K {
			for s := range S {
				if firstK[s] >= 0 && k >= firstK[s] {
					send(carryE[s*K+k], backlog[s])
				}
			}
		}
	}
	// What the greedy left at the end goes back to the source: the latest
	// submissions first, along the carry edges.
	for s := range S {
		r := backlog[s]
		for k := K - 1; r > 0 && k >= firstK[s]; k-- {
			if e := srcE[s*K+k]; e >= 0 {
				a := min(r, n.g.res[e^1])
				send(e, -a)
				r -= a
			}
			if r > 0 && k > firstK[s] {
				send(carryE[s*K+k-1], -r)
			}
		}
	}
	return n
}
