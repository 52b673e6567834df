package ctld

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/jobid"
	"github.com/sharq-hpc/sharq/spool"
)

// restore loads every job from the spool into memory and the core, so that
// each is back in its state: pending jobs queue again at their place,
// running ones hold their GPUs until their node reports (or times out).
func (c *Controller) restore(ctx context.Context) error {
	var all []*job
	err := c.sp.Scan(ctx, func(r spool.Record) error {
		j, err := decodeJob(r)
		if err != nil {
			return err
		}
		all = append(all, j)
		return nil
	})
	if err != nil {
		return fmt.Errorf("restore from spool: %w", err)
	}
	started := map[string][]int{} // array id -> indices that have subjob records
	now := c.now()
	for _, j := range all {
		c.jobs[j.ID] = j
		c.charge(j)
		if j.request != "" {
			c.requestIDs.add(requestKey{uid: j.Owner.UID, id: j.request}, j.ID, j.SubmitTime, now)
		}
		if j.Seq >= c.nextSeq {
			c.nextSeq = j.Seq + 1
		}
		if j.ArrayParent != "" {
			started[j.ArrayParent] = append(started[j.ArrayParent], j.ArrayIndex)
		}
	}
	c.seqLimit = c.nextSeq // force a fresh reservation before the next id
	for _, j := range restoreOrder(all) {
		if err := c.restoreJob(j, started[j.ID]); err != nil {
			return fmt.Errorf("restore job %s: %w", j.ID, err)
		}
	}
	// Nodes that ran jobs have node_timeout to say hello; after that they
	// are silent (lease.go): their jobs are requeued once the job lease
	// they may hold, renewed by the controller before this one at the
	// latest, has run out.
	deadline := now.Add(c.nodeTimeout())
	for _, j := range all {
		if j.running() {
			for _, a := range j.Allocs {
				c.node(a.Node).deadline = deadline
			}
		}
	}
	if len(all) > 0 {
		c.log.Info("restored jobs from the spool", "jobs", len(all))
	}
	c.replayHistory()
	if err := c.restoreLease(ctx); err != nil {
		return fmt.Errorf("restore the job lease: %w", err)
	}
	if err := c.restoreUsage(ctx); err != nil {
		return fmt.Errorf("restore fair share usage: %w", err)
	}
	if err := c.restoreComments(ctx); err != nil {
		return fmt.Errorf("restore node comments: %w", err)
	}
	if err := c.restoreClearedGPUFaults(ctx); err != nil {
		return fmt.Errorf("restore cleared GPU faults: %w", err)
	}
	return c.restoreDrained(ctx)
}

// drainedKey is where the spool keeps the nodes an admin drained.
const drainedKey = "drained-nodes"

// saveDrained writes the drained nodes to the spool (synced), so a drain
// outlives a controller restart.
func (c *Controller) saveDrained() error {
	var names []string
	for _, n := range c.core.Nodes() {
		if cn := c.nodes[n.Name]; cn != nil && cn.drained {
			names = append(names, n.Name)
		}
	}
	b, err := json.Marshal(names)
	if err != nil {
		return err
	}
	return c.sp.SetState(bgctx, drainedKey, b)
}

func (c *Controller) restoreDrained(ctx context.Context) error {
	b, err := c.sp.State(ctx, drainedKey)
	if err != nil || b == nil {
		return err
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return fmt.Errorf("spool state %s: %w", drainedKey, err)
	}
	for _, n := range names {
		if c.cfg.Node(n) == nil {
			continue // removed from the configuration since
		}
		cn := c.node(n)
		cn.drained = true
		if err := c.syncDrain(cn); err != nil {
			return fmt.Errorf("restore drain of %s: %w", n, err)
		}
	}
	return nil
}

func (c *Controller) restoreJob(j *job, startedIdx []int) error {
	switch {
	case j.finished():
		return c.core.Apply(sched.DependencyOutcome{ID: sched.JobID(j.ID), Started: !j.StartTime.IsZero(),
			ExitStatus: exitOr(j.ExitStatus, -1), Cancelled: j.ExitStatus == nil})
	case j.running():
		sj, err := j.schedJob(c.cfg.Cluster.Name)
		if err != nil {
			return err
		}
		sj.Array = nil
		allocs := make([]sched.Alloc, len(j.Allocs))
		j.parts = map[string]*part{}
		for i, a := range j.Allocs {
			allocs[i] = sched.Alloc{Node: a.Node, GPUs: a.GPUs}
			j.parts[a.Node] = &part{}
		}
		ad := sched.Adopted{Job: sj, Allocs: allocs, Started: j.StartTime, Preempting: j.Stopping == "preempted"}
		if err := c.core.Apply(ad); err != nil {
			return err
		}
		if j.Stopping == "deleted" {
			return c.core.Apply(sched.Cancelled{ID: sched.JobID(j.ID)})
		}
		return nil
	default:
		sj, err := j.schedJob(c.cfg.Cluster.Name)
		if err != nil {
			return err
		}
		if sj.Array != nil && len(startedIdx) > 0 {
			sj.Array.Indices = slices.DeleteFunc(sj.Array.Indices, func(i int) bool { return slices.Contains(startedIdx, i) })
		}
		// A requeued subjob waits again as its own entry; the core finds
		// its array from the id.
		return c.core.Apply(sched.Submitted{Job: sj, Restored: true, Ran: !j.StartTime.IsZero()})
	}
}

func exitOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// restoreOrder is the order in which restore hands the spool's jobs to the
// core: how finished jobs ended first (dependencies on them), then the
// running jobs, then the waiting ones, each after the jobs it depends on
// and an array after its requeued subjobs (it finds them in the core; an
// array with no index left to start and none of them yet would finish).
// That is submission order, except where qalter made a job depend on a
// later one or on an array.
func restoreOrder(all []*job) []*job {
	out := make([]*job, 0, len(all))
	var waiting []*job
	for _, j := range all {
		if j.finished() {
			out = append(out, j)
		}
	}
	for _, j := range all {
		switch {
		case j.finished():
		case j.running():
			out = append(out, j)
		default:
			waiting = append(waiting, j)
		}
	}
	slices.SortStableFunc(waiting, func(a, b *job) int { return cmp.Compare(a.Seq, b.Seq) })
	byID := make(map[string]*job, len(waiting))
	for _, j := range waiting {
		byID[j.ID] = j
	}
	// before lists, for each waiting job, the waiting jobs it must follow.
	before := make(map[*job][]*job, len(waiting))
	for _, j := range waiting {
		for _, d := range j.Deps {
			t := byID[d.On]
			if t == nil {
				if arr, _, ok := jobid.SplitSub(d.On); ok {
					t = byID[arr]
				}
			}
			if t != nil {
				before[j] = append(before[j], t)
			}
		}
		if p := byID[j.ArrayParent]; p != nil {
			before[p] = append(before[p], j)
		}
	}
	// Depth first, iteratively (a chain of dependencies may be long). A
	// cycle (qalter refuses to make one) is cut where it closes: the core
	// takes the dependency it cannot resolve as met.
	const (
		unseen = iota
		open
		done
	)
	mark := make(map[*job]int, len(waiting))
	type frame struct {
		j    *job
		next int // the next of before[j] to look at
	}
	for _, root := range waiting {
		if mark[root] != unseen {
			continue
		}
		mark[root] = open
		stack := []frame{{j: root}}
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(before[f.j]) {
				mark[f.j] = done
				out = append(out, f.j)
				stack = stack[:len(stack)-1]
				continue
			}
			t := before[f.j][f.next]
			f.next++
			if mark[t] == unseen {
				mark[t] = open
				stack = append(stack, frame{j: t})
			}
		}
	}
	return out
}
