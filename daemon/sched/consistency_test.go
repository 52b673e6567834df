package sched

import (
	"fmt"
	"sort"
)

// consistent recomputes the core's derived state from its jobs and
// nominations and returns the first disagreement, or nil. The property tests
// call it after every event and pass: it catches a nomination that holds
// fewer GPUs than its job asked for (issue 13: the orphan GPUs counted
// twice) at the moment it is made, not only when the job starts.
//
// shrunk names the nodes that reported fewer CPUs or less memory than they
// had at some time: their running jobs may hold more than the node has now
// (checked instead: no job starts on a node beyond what it has).
func (s *Scheduler) consistent(shrunk map[string]bool) error {
	jobs := s.sortedJobs()
	type nodeWant struct {
		held, nominated, leaving gpuSet
		excl, exclNom            int
		cpu, nomCPU, leaveCPU    int
		mem, nomMem, leaveMem    int64
	}
	want := map[*node]*nodeWant{}
	for _, n := range s.nodes {
		want[n] = &nodeWant{}
	}
	type shareWant struct{ run, pre, nom int }
	sw := map[*share]*shareWant{}
	for _, sh := range s.shares {
		sw[sh] = &shareWant{}
	}
	for _, j := range jobs {
		if j.gone {
			return fmt.Errorf("job %s: gone but still in the core", j.ID)
		}
		if !j.holding() {
			continue
		}
		if len(j.allocs) != j.Nodes || len(j.anodes) != j.Nodes {
			return fmt.Errorf("job %s: %d allocations for %d nodes", j.ID, len(j.allocs), j.Nodes)
		}
		n := 0
		for i, a := range j.allocs {
			nd := j.anodes[i]
			if nd == nil || nd.cfg.Name != a.Node {
				return fmt.Errorf("job %s: allocation %d names %s, node %v", j.ID, i, a.Node, nd)
			}
			if len(a.GPUs) != j.GPUsPerNode {
				return fmt.Errorf("job %s: %d GPUs on %s, asked %d", j.ID, len(a.GPUs), a.Node, j.GPUsPerNode)
			}
			g := setOf(a.GPUs)
			w := want[nd]
			if !w.held.and(g).isEmpty() {
				return fmt.Errorf("job %s: GPUs %v of %s held twice", j.ID, a.GPUs, a.Node)
			}
			w.held = w.held.or(g)
			leaving := j.state == Preempting
			if leaving {
				w.leaving = w.leaving.or(j.keeps(i))
			}
			if j.Exclusive {
				w.excl++
			}
			if nd.cpus > 0 {
				w.cpu += max(1, j.CPUsPerNode)
				if leaving {
					w.leaveCPU += max(1, j.CPUsPerNode)
				}
			}
			if nd.mem > 0 {
				w.mem += j.MemPerNode
				if leaving {
					w.leaveMem += j.MemPerNode
				}
			}
			if j.Exclusive {
				// Charged its whole node as it was when it started.
				if !g.andNot(j.keeps(i)).isEmpty() {
					return fmt.Errorf("job %s: keeps %v of %s, holds %v", j.ID, j.keeps(i).list(), a.Node, a.GPUs)
				}
				n += j.keeps(i).count()
			} else {
				n += len(a.GPUs)
			}
		}
		if j.gpuN != n {
			return fmt.Errorf("job %s: counts %d GPUs, holds %d", j.ID, j.gpuN, n)
		}
		if nm := j.victimOf; nm != nil && !containsJob(nm.victims, j) {
			return fmt.Errorf("job %s: victim of %s, which does not list it", j.ID, nm.j.ID)
		}
		if j.state == Preempting {
			sw[j.share].pre += n
		} else {
			sw[j.share].run += n
		}
	}
	for _, p := range s.parts {
		for _, nm := range p.noms {
			j := nm.j
			if j.gone || j.state != Pending || j.nom != nm {
				return fmt.Errorf("nomination of %s: job gone, not pending or not pointing back", j.ID)
			}
			if len(nm.allocs) != j.Nodes || len(nm.nodes) != j.Nodes {
				return fmt.Errorf("nomination of %s: %d allocations for %d nodes", j.ID, len(nm.allocs), j.Nodes)
			}
			for i, a := range nm.allocs {
				nd := nm.nodes[i]
				if len(a.GPUs) != j.GPUsPerNode {
					return fmt.Errorf("nomination of %s: %d GPUs on %s, asked %d", j.ID, len(a.GPUs), a.Node, j.GPUsPerNode)
				}
				for k := 0; k < i; k++ {
					if nm.nodes[k] == nd {
						return fmt.Errorf("nomination of %s: node %s twice", j.ID, a.Node)
					}
				}
				g := setOf(a.GPUs)
				w := want[nd]
				if !w.nominated.and(g).isEmpty() {
					return fmt.Errorf("nomination of %s: GPUs %v of %s nominated twice", j.ID, a.GPUs, a.Node)
				}
				if !g.andNot(nd.valid).isEmpty() {
					return fmt.Errorf("nomination of %s: GPUs %v of %s out of range", j.ID, a.GPUs, a.Node)
				}
				w.nominated = w.nominated.or(g)
				if j.Exclusive {
					w.exclNom++
				}
				if nd.cpus > 0 {
					w.nomCPU += max(1, j.CPUsPerNode)
				}
				if nd.mem > 0 {
					w.nomMem += j.MemPerNode
				}
				// Every nominated GPU still held is held by a job being
				// preempted: nothing else frees it.
				for _, v := range nd.jobs {
					for k, x := range v.anodes {
						if x == nd && !setOf(v.allocs[k].GPUs).and(g).isEmpty() && v.state != Preempting {
							return fmt.Errorf("nomination of %s: GPUs of %s are held by %s (%v), which is not leaving", j.ID, a.Node, v.ID, v.state)
						}
					}
				}
			}
			for _, v := range nm.victims {
				if v.victimOf != nm || v.state != Preempting || v.gone {
					return fmt.Errorf("nomination of %s: victim %s is %v, victim of another", j.ID, v.ID, v.state)
				}
			}
			if !j.Exclusive && nm.charge != j.total() || j.Exclusive && nm.charge < j.total() {
				return fmt.Errorf("nomination of %s: charges %d GPUs for a request of %d (exclusive %v)", j.ID, nm.charge, j.total(), j.Exclusive)
			}
			sw[j.share].nom += nm.charge
		}
	}
	for _, n := range s.nodes {
		w := want[n]
		switch {
		case n.held != w.held:
			return fmt.Errorf("node %s: held %v, jobs hold %v", n.cfg.Name, n.held.list(), w.held.list())
		case n.nominated != w.nominated:
			return fmt.Errorf("node %s: nominated %v, nominations hold %v", n.cfg.Name, n.nominated.list(), w.nominated.list())
		case n.leaving != w.leaving:
			return fmt.Errorf("node %s: leaving %v, preempting jobs hold %v", n.cfg.Name, n.leaving.list(), w.leaving.list())
		case n.excl != w.excl:
			return fmt.Errorf("node %s: excl %d, Exclusive jobs on it %d", n.cfg.Name, n.excl, w.excl)
		case n.exclNom != w.exclNom:
			return fmt.Errorf("node %s: exclNom %d, Exclusive nominations on it %d", n.cfg.Name, n.exclNom, w.exclNom)
		case (n.excl > 0 || n.exclNom > 0) && n.free != 0:
			return fmt.Errorf("node %s: held by an Exclusive job, free %d", n.cfg.Name, n.free)
		case n.excl == 0 && n.exclNom == 0 && n.free != n.valid.andNot(n.held).andNot(n.nominated).count():
			return fmt.Errorf("node %s: free %d", n.cfg.Name, n.free)
		case n.exclNom > 0 && n.spare != 0:
			return fmt.Errorf("node %s: an Exclusive preemptor's, spare %d", n.cfg.Name, n.spare)
		case n.exclNom == 0 && n.spare != n.leaving.andNot(n.nominated).count():
			return fmt.Errorf("node %s: spare %d", n.cfg.Name, n.spare)
		case !shrunk[n.cfg.Name] && n.cpus > 0 && w.cpu > n.cpus, !shrunk[n.cfg.Name] && n.mem > 0 && w.mem > n.mem:
			return fmt.Errorf("node %s: its jobs hold %d CPUs and %d bytes; it has %d and %d", n.cfg.Name, w.cpu, w.mem, n.cpus, n.mem)
		case !shrunk[n.cfg.Name] && n.cpus > 0 && (n.usedCPU > n.cpus || n.usedCPU-n.leaveCPU+n.nomCPU > n.cpus):
			return fmt.Errorf("node %s: %d CPUs, %d used (%d leaving), %d nominated", n.cfg.Name, n.cpus, n.usedCPU, n.leaveCPU, n.nomCPU)
		case !shrunk[n.cfg.Name] && n.mem > 0 && (n.usedMem > n.mem || n.usedMem-n.leaveMem+n.nomMem > n.mem):
			return fmt.Errorf("node %s: %d bytes, %d used (%d leaving), %d nominated", n.cfg.Name, n.mem, n.usedMem, n.leaveMem, n.nomMem)
		case n.usedCPU != w.cpu || n.nomCPU != w.nomCPU || n.usedMem != w.mem || n.nomMem != w.nomMem ||
			n.leaveCPU != w.leaveCPU || n.leaveMem != w.leaveMem:
			return fmt.Errorf("node %s: cpu %d+%d (%d leaving) mem %d+%d (%d leaving), jobs %d+%d (%d) %d+%d (%d)", n.cfg.Name,
				n.usedCPU, n.nomCPU, n.leaveCPU, n.usedMem, n.nomMem, n.leaveMem, w.cpu, w.nomCPU, w.leaveCPU, w.mem, w.nomMem, w.leaveMem)
		}
	}
	for _, sh := range s.shares {
		w := sw[sh]
		if sh.run != w.run || sh.pre != w.pre || sh.nom != w.nom {
			return fmt.Errorf("share %s: run/pre/nom %d/%d/%d, jobs %d/%d/%d", sh.cfg.Name, sh.run, sh.pre, sh.nom, w.run, w.pre, w.nom)
		}
	}
	// What each user holds in each share (userlimits.go).
	users := map[*share]map[string]userState{}
	for _, j := range jobs {
		if j.gone || j.share == nil {
			continue
		}
		m := users[j.share]
		if m == nil {
			m = map[string]userState{}
			users[j.share] = m
		}
		u := m[j.User]
		switch {
		case j.holding():
			u.jobs++
			u.gpus += j.gpuN
		case j.nom != nil:
			u.nomJobs++
			u.nomGPUs += j.nom.charge
		default:
			continue
		}
		m[j.User] = u
	}
	for _, sh := range s.shares {
		if len(sh.users) != len(users[sh]) {
			return fmt.Errorf("share %s: %d users counted, jobs of %d", sh.cfg.Name, len(sh.users), len(users[sh]))
		}
		for name, u := range sh.users {
			if *u != users[sh][name] {
				return fmt.Errorf("share %s: user %q counted %+v, jobs %+v", sh.cfg.Name, name, *u, users[sh][name])
			}
		}
	}
	// Every queued job is in its user's queue of its share.
	for _, j := range jobs {
		if j.inReady && !j.gone {
			uq := j.share.q.byUser[j.share.q.key(j)]
			if uq == nil || uq.q.n == 0 {
				return fmt.Errorf("job %s: queued, but its share has no queue for %q", j.ID, j.share.q.key(j))
			}
		}
	}
	for _, p := range s.parts {
		spare, nonR, rIdle, over := 0, 0, 0, 0
		for _, n := range p.nodes {
			spare += n.spare
		}
		for _, sh := range s.shares {
			if sh.part != p {
				continue
			}
			e, q := sh.eff(), sh.quota()
			if sh.reserve() {
				rIdle += max(0, q-e)
			} else {
				nonR += e
			}
			if e > q {
				over++
			}
		}
		if p.spare != spare || p.nonRUsed != nonR || p.reserveIdle != rIdle || p.overQuota != over {
			return fmt.Errorf("partition %s: spare/nonRUsed/reserveIdle/overQuota %d/%d/%d/%d, recomputed %d/%d/%d/%d",
				p.cfg.Name, p.spare, p.nonRUsed, p.reserveIdle, p.overQuota, spare, nonR, rIdle, over)
		}
	}
	return nil
}

// sortedIDs returns the ids of the core's jobs in id order.
func (s *Scheduler) sortedIDs() []JobID {
	ids := make([]JobID, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	return ids
}

// reasonsTruthful checks, after a pass, the reasons about free room
// (issue 13 item 7): a queued job said to wait for Resources is not one whose
// GPUs are free in total but split across nodes (that is Fragmented), a job
// said to be Fragmented has no nomination, and a nomination's job says
// ReclaimingForFit exactly when it was made for fragmentation.
//
// "Free in total" counts only the free GPUs the job's share may take: a
// job of a non-RESERVE share takes at most the pool's slack (the rest of
// the free GPUs is RESERVE shares' idle quota, or is held for GPUs that
// leaving borrowers still hold), so one whose GPUs pass the slack waits
// for Resources whatever the layout; a start later in the same pass (a
// RESERVE share's, around it) may split the free GPUs it did not count on,
// and a RESERVE share's reclaim later in the pass (its nomination is not
// in the pool; the victims leave it) may raise the slack it counted: after
// such a pass (plan) the slack is not checked.
func (s *Scheduler) reasonsTruthful(plan Plan) error {
	slackRaised := false
	for _, pr := range plan.Preempts {
		if j, ok := s.jobs[pr.For]; ok && j.share != nil && j.share.reserve() {
			slackRaised = true
		}
	}
	for _, j := range s.sortedJobs() {
		if j.state != Pending {
			continue
		}
		if j.nom != nil {
			if j.reason != j.nom.reason() {
				return fmt.Errorf("job %s: nominated, reason %v, want %v", j.ID, j.reason, j.nom.reason())
			}
			continue
		}
		switch j.reason {
		case ReasonFragmented:
			if j.total() == 0 {
				return fmt.Errorf("job %s: Fragmented with no GPUs", j.ID)
			}
		case ReasonResources:
			p := j.share.part
			if p != nil && j.inReady && !p.accounts && (j.share.reserve() || j.charge() <= p.slack() && !slackRaised) && s.fragmented(p, j) {
				return fmt.Errorf("job %s: Resources, but %d GPUs are free for its %d (split across nodes)", j.ID, p.freeAvail, j.total())
			}
		}
	}
	return nil
}
