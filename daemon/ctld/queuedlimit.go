package ctld

import (
	"fmt"

	"github.com/sharq-hpc/sharq/api"
)

// userShare keys a user's unfinished jobs in one share.
type userShare struct {
	uid   uint32
	share string
}

// jobCount is how many jobs j counts for max_queued_jobs_per_user: an
// array its number of subjobs (as PBS's max_queued and Slurm's
// MaxSubmitJobs count them), until the whole array has finished.
func jobCount(j *api.Job) int {
	if j.ArrayIndices.IsZero() {
		return 1
	}
	return max(j.ArrayIndices.Len(), 1)
}

// maxQueued is the max_queued_jobs_per_user of share: its own, else the
// cluster's; 0 = no limit.
func (c *Controller) maxQueued(share string) int {
	if sh := c.cfg.Share(share); sh != nil && sh.MaxQueuedJobsPerUser > 0 {
		return sh.MaxQueuedJobsPerUser
	}
	return c.cfg.Cluster.MaxQueuedJobsPerUser
}

// checkQueued refuses a submit that would give the user more unfinished
// jobs in the share than its max_queued_jobs_per_user (CodeUserLimit).
func (c *Controller) checkQueued(uid uint32, user string, j *api.Job) *api.Error {
	limit := c.maxQueued(j.Share)
	if limit <= 0 {
		return nil
	}
	held, n := c.userJobs[userShare{uid, j.Share}], jobCount(j)
	if held+n <= limit {
		return nil
	}
	what := "this job"
	if n > 1 {
		what = fmt.Sprintf("this array's %d subjobs", n)
	}
	return &api.Error{Code: api.CodeUserLimit, Message: fmt.Sprintf(
		"user %s has %d unfinished jobs in queue %s; %s would pass its max_queued_jobs_per_user of %d: wait for some to finish",
		user, held, j.Share, what, limit)}
}
