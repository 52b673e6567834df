package sched

import (
	"fmt"
	"slices"
	"sort"

	"github.com/sharq-hpc/sharq/policy"
)

const maxPriority = 9999

// The range of Job.Order: PBS's job priority.
const (
	MinOrder = -1024
	MaxOrder = 1023
)

func badOrder(o int) bool { return o < MinOrder || o > MaxOrder }

// MaxWalltime bounds a job's (and a partition's default) walltime, so that
// expected ends stay far below the core's "never".
const MaxWalltime = policy.MaxWalltime

func (s *Scheduler) known(id JobID) bool {
	if _, ok := s.jobs[id]; ok {
		return true
	}
	_, ok := s.outcomes[id]
	return ok
}

func (s *Scheduler) lookup(id JobID) (*job, error) {
	j, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownJob, id)
	}
	return j, nil
}

func checkRequest(jb *Job) error {
	switch {
	case jb.ID == "":
		return fmt.Errorf("%w: job without an id", ErrInvalid)
	case jb.Priority < 0 || jb.Priority > maxPriority:
		return fmt.Errorf("%w: job %s: priority %d (0..%d)", ErrInvalid, jb.ID, jb.Priority, maxPriority)
	case badOrder(jb.Order):
		return fmt.Errorf("%w: job %s: order %d (%d..%d)", ErrInvalid, jb.ID, jb.Order, MinOrder, MaxOrder)
	case jb.Nodes < 1:
		return fmt.Errorf("%w: job %s: %d nodes", ErrInvalid, jb.ID, jb.Nodes)
	case jb.GPUsPerNode < 0 || jb.GPUsPerNode > maxNodeGPUs || jb.CPUsPerNode < 0 || jb.MemPerNode < 0:
		return fmt.Errorf("%w: job %s: negative or oversized request", ErrInvalid, jb.ID)
	case jb.Hold&^(HoldUser|HoldAdmin|HoldSystem) != 0:
		return fmt.Errorf("%w: job %s: hold %d", ErrInvalid, jb.ID, jb.Hold)
	case jb.Walltime < 0 || jb.Walltime > MaxWalltime:
		return fmt.Errorf("%w: job %s: walltime %v (0..%v)", ErrInvalid, jb.ID, jb.Walltime, MaxWalltime)
	case jb.Grace > MaxWalltime:
		return fmt.Errorf("%w: job %s: grace %v (at most %v)", ErrInvalid, jb.ID, jb.Grace, MaxWalltime)
	case len(jb.Image) > maxImageLen:
		return fmt.Errorf("%w: job %s: image of %d bytes (at most %d)", ErrInvalid, jb.ID, len(jb.Image), maxImageLen)
	}
	return checkTopologyRequest(jb)
}

func (s *Scheduler) submitted(e Submitted) error {
	jb := cloneJob(e.Job)
	if err := checkRequest(&jb); err != nil {
		return err
	}
	if s.known(jb.ID) {
		return fmt.Errorf("%w: %s", ErrDuplicateJob, jb.ID)
	}
	sh := s.shareByName[jb.Share]
	if (sh == nil || sh.removed) && !e.Restored {
		return fmt.Errorf("%w: job %s: unknown share %q", ErrInvalid, jb.ID, jb.Share)
	}
	var met []Dep
	if e.Restored {
		jb.Deps = slices.DeleteFunc(jb.Deps, func(d Dep) bool {
			_, _, unknown := s.depStatus(d)
			if unknown && d.On != jb.ID {
				met = append(met, d)
				return true
			}
			return false
		})
	}
	pid, idx, isSub := splitSubID(jb.ID)
	if a := jb.Array; a != nil {
		if !isArrayID(jb.ID) {
			return fmt.Errorf("%w: array job %s: id must look like 123[].host", ErrInvalid, jb.ID)
		}
		// No indices left is valid: a controller restoring an array whose
		// subjobs have all started (they are adopted or submitted first).
		if a.MaxRunning < 0 {
			return fmt.Errorf("%w: array job %s: negative %%max", ErrInvalid, jb.ID)
		}
		for i, x := range a.Indices {
			if x < 0 || (i > 0 && x <= a.Indices[i-1]) {
				return fmt.Errorf("%w: array job %s: indices must ascend", ErrInvalid, jb.ID)
			}
		}
	} else if isArrayID(jb.ID) {
		return fmt.Errorf("%w: job %s: an array id without Array", ErrInvalid, jb.ID)
	}
	if err := s.checkDeps(jb.ID, jb.Deps); err != nil {
		return err
	}

	if sh == nil {
		sh = s.ghostShare(jb.Share, nil)
	}
	j := &job{Job: jb, share: sh, state: Pending, everStarted: e.Ran, metDeps: met}
	if a := jb.Array; a != nil {
		j.arr = &arrayState{indices: a.Indices, maxRunning: a.MaxRunning}
		for _, sj := range s.orphanSubs[jb.ID] {
			if sj.state == Pending {
				j.arr.pendingSub++
			} else {
				j.arr.running = append(j.arr.running, sj)
			}
			j.everStarted = true
		}
		delete(s.orphanSubs, jb.ID)
	} else if isSub {
		j.sub, j.parent, j.index = true, pid, idx
		if p := s.jobs[pid]; p != nil && p.arr != nil {
			p.arr.pendingSub++
		} else {
			s.orphanSubs[pid] = append(s.orphanSubs[pid], j)
		}
	}
	s.jobs[j.ID] = j
	sh.pending++
	s.setNotBefore(j)
	never := s.setDeps(j)
	s.checkNeverFits(j, holdOrRelease)
	s.refresh(j)
	if never {
		s.failPending(j, ReasonDependencyNeverMet)
	} else if j.arr != nil && j.arr.remaining() == 0 {
		s.noIndexLeft(j)
	}
	return nil
}

func (s *Scheduler) adopted(e Adopted) error {
	jb := cloneJob(e.Job)
	if err := checkRequest(&jb); err != nil {
		return err
	}
	if s.known(jb.ID) {
		return fmt.Errorf("%w: %s", ErrDuplicateJob, jb.ID)
	}
	if jb.Array != nil || isArrayID(jb.ID) {
		return fmt.Errorf("%w: job %s: an array cannot be adopted, only its subjobs", ErrInvalid, jb.ID)
	}
	if len(e.Allocs) != jb.Nodes {
		return fmt.Errorf("%w: job %s: %d allocations for %d nodes", ErrInvalid, jb.ID, len(e.Allocs), jb.Nodes)
	}
	var nodes []*node // nil: not configured (a ghost is made once all is checked)
	var allocs []Alloc
	for i, a := range e.Allocs {
		if a.Node == "" || len(a.GPUs) != jb.GPUsPerNode ||
			slices.ContainsFunc(e.Allocs[:i], func(b Alloc) bool { return b.Node == a.Node }) {
			return fmt.Errorf("%w: job %s: allocation on %q does not match the request", ErrInvalid, jb.ID, a.Node)
		}
		n := s.nodeByName[a.Node]
		var held gpuSet
		if n != nil {
			held = n.held
		}
		var g gpuSet
		for _, x := range a.GPUs {
			if x < 0 || x >= maxNodeGPUs || g.has(x) || held.has(x) {
				return fmt.Errorf("%w: job %s: GPU %d of %s is out of range or busy", ErrInvalid, jb.ID, x, a.Node)
			}
			g.set(x)
		}
		nodes = append(nodes, n)
		allocs = append(allocs, Alloc{Node: a.Node, GPUs: g.list()})
	}
	for i, n := range nodes {
		if n == nil {
			nodes[i] = s.ghostNode(allocs[i].Node, nil)
		}
		// A ghost shows as many GPUs as its jobs hold there, at least.
		if n, g := nodes[i], allocs[i].GPUs; n.ghost && len(g) > 0 && g[len(g)-1] >= n.gpus {
			n.gpus = g[len(g)-1] + 1
			n.resetValid()
		}
	}
	sh := s.shareByName[jb.Share]
	if sh == nil {
		sh = s.ghostShare(jb.Share, nil)
	}
	j := &job{Job: jb, share: sh, state: Running, depsOK: true, timeOK: true, everStarted: true}
	if e.Preempting {
		j.state = Preempting
	}
	j.allocs, j.anodes, j.started = allocs, nodes, e.Started
	if pid, idx, ok := splitSubID(jb.ID); ok {
		j.sub, j.parent, j.index = true, pid, idx
		if p := s.jobs[pid]; p != nil && p.arr != nil {
			p.arr.running = append(p.arr.running, j)
			p.everStarted = true
		} else {
			s.orphanSubs[pid] = append(s.orphanSubs[pid], j)
		}
	}
	s.jobs[j.ID] = j
	s.hold(j)
	for _, n := range nodes {
		s.nodeRefresh(n)
	}
	return nil
}

func containsNode(list []*node, n *node) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

func (s *Scheduler) cancelled(e Cancelled) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		// qdel 123[7] of a subjob that has not started: it never will.
		if pid, idx, ok := splitSubID(e.ID); ok {
			if p := s.jobs[pid]; p != nil && !p.gone && p.arr != nil && p.arr.hasRemaining(idx) {
				s.dropIndex(p, idx)
				return nil
			}
		}
		return err
	}
	switch {
	case j.arr != nil:
		j.cancelled = true
		if j.state == Pending {
			s.leavePending(j)
			j.state = Running
		} else {
			// Every index has started, but requeued subjobs wait in
			// the queue again: they go with the array.
			for _, sj := range s.pendingSubs(j) {
				s.cancelPending(sj)
			}
		}
		for _, sj := range j.arr.running {
			s.kill(sj)
		}
		s.checkArrayDone(j)
	case j.state == Pending:
		s.cancelPending(j)
	default:
		s.kill(j)
	}
	return nil
}

// kill marks a job that holds GPUs as cancelled; it keeps them until Exited.
func (s *Scheduler) kill(j *job) {
	j.cancelled = true
	if j.state == Running {
		j.state = Killing
	}
}

func (s *Scheduler) exited(e Exited) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		return err
	}
	if !j.holding() {
		return fmt.Errorf("%w: job %s is not running", ErrInvalid, e.ID)
	}
	cause := stopExited
	if j.state == Preempting {
		cause = stopPreempted
	}
	s.stopped(j, e.ExitStatus, cause)
	return nil
}

func (s *Scheduler) requeued(e Requeued) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		return err
	}
	if !j.holding() {
		return fmt.Errorf("%w: job %s is not running", ErrInvalid, e.ID)
	}
	if j.cancelled || j.state == Killing {
		s.stopped(j, 0, stopExited)
		return nil
	}
	if e.NodeLost {
		s.stopped(j, 0, stopNodeLost)
		return nil
	}
	s.unhold(j)
	s.requeue(j, stopExited)
	return nil
}

func (s *Scheduler) startFailed(e StartFailed) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		return err
	}
	if !j.holding() {
		return fmt.Errorf("%w: job %s is not running", ErrInvalid, e.ID)
	}
	if e.Refused {
		s.stopped(j, 0, stopStartRefused)
	} else {
		s.stopped(j, 0, stopStartFailed)
	}
	return nil
}

// entries returns the pending entries an event on j applies to: j itself,
// and for an array its preempted subjobs waiting in the queue.
func (s *Scheduler) entries(j *job) []*job {
	out := []*job{}
	if j.state == Pending {
		out = append(out, j)
	}
	return append(out, s.pendingSubs(j)...)
}

// reposition changes a pending entry's priority and order, keeping the
// queue sorted.
func (s *Scheduler) reposition(j *job, prio, order int) {
	if j.nom != nil {
		s.releaseNom(j.nom)
	}
	if j.Priority == prio && j.Order == order {
		return
	}
	if j.inReady {
		j.share.q.remove(j)
		j.Priority, j.Order = prio, order
		j.share.q.insert(j)
	} else {
		j.Priority, j.Order = prio, order
	}
	s.markDirty(j.share)
}

func (s *Scheduler) priorityChanged(e PriorityChanged) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		return err
	}
	if e.Priority < 0 || e.Priority > maxPriority {
		return fmt.Errorf("%w: job %s: priority %d (0..%d)", ErrInvalid, e.ID, e.Priority, maxPriority)
	}
	if badOrder(e.Order) {
		return fmt.Errorf("%w: job %s: order %d (%d..%d)", ErrInvalid, e.ID, e.Order, MinOrder, MaxOrder)
	}
	for _, x := range s.entries(j) {
		s.reposition(x, e.Priority, e.Order)
	}
	running := []*job{}
	if j.holding() {
		running = append(running, j)
	}
	if j.arr != nil {
		running = append(running, j.arr.running...)
		j.Priority, j.Order = e.Priority, e.Order
	}
	for _, x := range running {
		x.Priority, x.Order = e.Priority, e.Order
		s.markDirty(x.share)
	}
	return nil
}

func (s *Scheduler) holdChanged(e HoldChanged) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		return err
	}
	if e.Bit == 0 || e.Bit&^(HoldUser|HoldAdmin|HoldSystem) != 0 {
		return fmt.Errorf("%w: job %s: hold bits %d", ErrInvalid, e.ID, e.Bit)
	}
	list := s.entries(j)
	if len(list) == 0 {
		return fmt.Errorf("%w: job %s is not pending", ErrInvalid, e.ID)
	}
	for _, x := range list {
		if e.Set {
			x.Hold |= e.Bit
			if x.nom != nil {
				s.releaseNom(x.nom)
			}
		} else {
			x.Hold &^= e.Bit
			if e.Bit&HoldSystem != 0 && x.neverFits {
				x.neverFits = false
				if p := x.share.part; p != nil {
					p.neverFits = removeJob(p.neverFits, x)
				}
			}
		}
		s.refresh(x)
	}
	return nil
}

func (s *Scheduler) jobAltered(e JobAltered) error {
	j, err := s.lookup(e.ID)
	if err != nil {
		return err
	}
	if j.state != Pending {
		return fmt.Errorf("%w: job %s is not pending", ErrInvalid, e.ID)
	}
	if e.Priority < 0 || e.Priority > maxPriority {
		return fmt.Errorf("%w: job %s: priority %d (0..%d)", ErrInvalid, e.ID, e.Priority, maxPriority)
	}
	if badOrder(e.Order) {
		return fmt.Errorf("%w: job %s: order %d (%d..%d)", ErrInvalid, e.ID, e.Order, MinOrder, MaxOrder)
	}
	if e.Walltime < 0 || e.Walltime > MaxWalltime {
		return fmt.Errorf("%w: job %s: walltime %v (0..%v)", ErrInvalid, e.ID, e.Walltime, MaxWalltime)
	}
	deps := e.Deps
	if len(j.metDeps) > 0 {
		// The driver gives back what it restored the job with: those
		// dropped as met stay met.
		deps = slices.DeleteFunc(slices.Clone(deps), func(d Dep) bool { return slices.Contains(j.metDeps, d) })
	}
	if j.everStarted && !sameDeps(j.Deps, deps) {
		return fmt.Errorf("%w: job %s: dependencies of a job that has run cannot change", ErrInvalid, e.ID)
	}
	if err := s.checkDeps(j.ID, deps); err != nil {
		return err
	}
	if j.nom != nil {
		s.releaseNom(j.nom)
	}
	s.reposition(j, e.Priority, e.Order)
	if !j.NotBefore.Equal(e.NotBefore) {
		j.NotBefore = e.NotBefore
		s.setNotBefore(j)
	}
	j.Deps = append([]Dep(nil), deps...)
	if j.Walltime != e.Walltime {
		j.Walltime = e.Walltime
		s.unreserve(j)
		for _, sj := range s.pendingSubs(j) {
			sj.Walltime = e.Walltime
		}
	}
	never := s.setDeps(j)
	s.refresh(j)
	if never {
		s.failPending(j, ReasonDependencyNeverMet)
	} else if j.arr != nil && j.arr.remaining() == 0 {
		s.noIndexLeft(j)
	}
	return nil
}

func sameDeps(a, b []Dep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (s *Scheduler) lookupNode(name string) (*node, error) {
	n := s.nodeByName[name]
	if n == nil || n.ghost {
		return nil, fmt.Errorf("%w: %s", ErrUnknownNode, name)
	}
	return n, nil
}

func (s *Scheduler) nodeUp(e NodeUp) error {
	n, err := s.lookupNode(e.Node)
	if err != nil {
		return err
	}
	if e.GPUs < 0 || e.GPUs > maxNodeGPUs {
		return fmt.Errorf("%w: node %s: %d GPUs (0..%d)", ErrInvalid, e.Node, e.GPUs, maxNodeGPUs)
	}
	if e.CPUs < 0 || e.CPUs > maxNodeCPUs || e.MemBytes < 0 || e.MemBytes > maxNodeMem {
		return fmt.Errorf("%w: node %s: %d CPUs, %d bytes of memory (0..%d, 0..%d)", ErrInvalid, e.Node, e.CPUs, e.MemBytes, maxNodeCPUs, maxNodeMem)
	}
	if err := checkPeers(e.Node, e.GPUPeers); err != nil {
		return err
	}
	if e.GPUPeers != nil {
		s.topo.reported[e.Node] = peerSets(e.GPUPeers)
	}
	oc, om := n.cpus, n.mem
	n.up = true
	if e.CPUs > 0 {
		n.repCPU = e.CPUs
	}
	if e.MemBytes > 0 {
		n.repMem = e.MemBytes
	}
	c, m := n.capacity()
	if e.GPUs > 0 && e.GPUs < n.gpus || c > 0 && (oc == 0 || c < oc) || m > 0 && (om == 0 || m < om) {
		// A nomination holds GPUs (and counts CPUs, memory) the node may no
		// longer have: its preemptor plans again.
		s.releaseNomsOn(n)
	}
	s.setCapacity(n, c, m)
	recountAccounts(n.part)
	grew := false
	if e.GPUs > 0 && e.GPUs != n.gpus {
		grew = e.GPUs > n.gpus
		n.gpus = e.GPUs
		n.resetValid()
		computeAtLeast(n.part)
	}
	if (oc > 0 && c > oc) || (om > 0 && m > om) {
		grew = true // a request the old count refused may fit
	}
	s.nodeRefresh(n)
	n.part.dirty = true
	if grew || len(n.part.neverFits) > 0 {
		s.recheckNeverFits(n.part)
	}
	return nil
}

// releaseNomsOn releases the nominations that use node n.
func (s *Scheduler) releaseNomsOn(n *node) {
	p := n.part
	for i := 0; i < len(p.noms); {
		if containsNode(p.noms[i].nodes, n) {
			s.releaseNom(p.noms[i])
			continue
		}
		i++
	}
}

func (s *Scheduler) nodeDown(e NodeDown) error {
	n := s.nodeByName[e.Node]
	if n == nil {
		return fmt.Errorf("%w: %s", ErrUnknownNode, e.Node)
	}
	n.up = false
	if !n.ghost { // a ghost is in no partition: nothing is nominated there
		s.releaseNomsOn(n)
	}
	jobs := append([]*job(nil), n.jobs...)
	sort.Slice(jobs, func(a, b int) bool {
		if jobs[a].Seq != jobs[b].Seq {
			return jobs[a].Seq < jobs[b].Seq
		}
		return jobs[a].ID < jobs[b].ID
	})
	for _, j := range jobs {
		// A victim already leaving was preempted; any other job lost its
		// node.
		cause := stopNodeLost
		if j.state == Preempting {
			cause = stopPreempted
		}
		s.stopped(j, 0, cause)
	}
	s.nodeRefresh(n)
	if n.part != nil {
		n.part.dirty = true
	}
	return nil
}

func (s *Scheduler) nodeDrained(e NodeDrained) error {
	n, err := s.lookupNode(e.Node)
	if err != nil {
		return err
	}
	n.drain = true
	s.releaseNomsOn(n)
	s.nodeRefresh(n)
	n.part.dirty = true
	return nil
}

func (s *Scheduler) nodeResumed(e NodeResumed) error {
	n, err := s.lookupNode(e.Node)
	if err != nil {
		return err
	}
	n.drain = false
	s.nodeRefresh(n)
	n.part.dirty = true
	return nil
}

func (s *Scheduler) dependencyOutcome(e DependencyOutcome) error {
	if e.ID == "" {
		return fmt.Errorf("%w: outcome without a job id", ErrInvalid)
	}
	if _, ok := s.jobs[e.ID]; ok {
		return fmt.Errorf("%w: job %s is still in the core", ErrInvalid, e.ID)
	}
	if _, ok := s.outcomes[e.ID]; ok {
		// Its end is known (it ended here, or was told): another would
		// change what jobs depending on it see, after some resolved.
		return fmt.Errorf("%w: outcome of %s, which the core knows", ErrDuplicateJob, e.ID)
	}
	s.outcomes[e.ID] = outcome{exit: int32(e.ExitStatus), started: e.Started, cancelled: e.Cancelled, failed: e.Failed}
	s.notifyEnded(e.ID)
	return nil
}
