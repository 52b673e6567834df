package ctld

import (
	"fmt"

	"github.com/sharq-hpc/sharq/jobid"
)

// Job ids are parsed and printed by package jobid; these helpers bind them
// to the cluster's name.

// parseRef parses what a user typed ("12", "12.lab", "12[]", "12[7]",
// "12[2-5,9]"); a full id must carry the cluster's name.
func parseRef(s, cluster string) (jobid.Ref, error) {
	r, err := jobid.ParseRef(s)
	if err != nil {
		return r, err
	}
	if r.Server != "" && r.Server != cluster {
		return r, fmt.Errorf("job id %q: cluster %q is not %q: %w", s, r.Server, cluster, jobid.ErrBadID)
	}
	return r, nil
}

func jobID(seq uint64, cluster string) string   { return jobid.Job(seq, cluster) }
func arrayID(seq uint64, cluster string) string { return jobid.ArrayJob(seq, cluster) }
func subjobID(seq uint64, i int, cluster string) string {
	return jobid.Subjob(seq, i, cluster)
}

// resolve lists the jobs a reference names that the controller holds. A
// selection of subjobs is walked within the array's real indices only, so
// that 1[0-16777216] costs what the array's size costs, not what was typed.
func (c *Controller) resolve(r jobid.Ref) []*job {
	cl := c.cfg.Cluster.Name
	if _, single := r.Single(); single {
		if j := c.jobs[r.ID(cl)]; j != nil {
			return []*job{j}
		}
		return nil
	}
	parent := c.jobs[arrayID(r.Seq, cl)]
	if parent == nil {
		return nil
	}
	var out []*job
	r.Each(parent.ArrayIndices, func(i int) {
		if j := c.jobs[subjobID(r.Seq, i, cl)]; j != nil {
			out = append(out, j)
		}
	})
	return out
}
