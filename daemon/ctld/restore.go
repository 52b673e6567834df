package ctld

import (
	"context"
	"fmt"
	"slices"

	"sharq/api"
	"sharq/daemon/sched"
	"sharq/spool"
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
	for _, j := range all {
		c.jobs[j.ID] = j
		if j.Seq >= c.nextSeq {
			c.nextSeq = j.Seq + 1
		}
		if j.ArrayParent != "" {
			started[j.ArrayParent] = append(started[j.ArrayParent], j.ArrayIndex)
		}
	}
	c.seqLimit = c.nextSeq // force a fresh reservation before the next id
	now := c.now()
	// Outcomes of finished jobs first (dependencies), then single jobs and
	// subjobs, then the arrays, which find their subjobs in the core.
	phase := func(j *job) int {
		switch {
		case j.finished():
			return 0
		case j.ArrayIndices != "":
			return 2
		}
		return 1
	}
	for p := 0; p < 3; p++ {
		for _, j := range all {
			if phase(j) != p {
				continue
			}
			if err := c.restoreJob(j, started[j.ID]); err != nil {
				return fmt.Errorf("restore job %s: %w", j.ID, err)
			}
		}
	}
	// Nodes that ran jobs have node_timeout to say hello; after that their
	// jobs are requeued.
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
		j.stopping = stoppingFromHistory(j)
		ad := sched.Adopted{Job: sj, Allocs: allocs, Started: j.StartTime, Preempting: j.stopping == "preempted"}
		if err := c.core.Apply(ad); err != nil {
			return err
		}
		if j.stopping == "deleted" {
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
		return c.core.Apply(sched.Submitted{Job: sj})
	}
}

// stoppingFromHistory: the state E tells a stop was sent; the last history
// entry says why.
func stoppingFromHistory(j *job) string {
	if j.State != api.StateExiting || len(j.History) == 0 {
		return ""
	}
	last := j.History[len(j.History)-1].What
	if len(last) >= 9 && last[:9] == "preempted" {
		return "preempted"
	}
	return "deleted"
}

func exitOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
