package ctld

import (
	"fmt"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// userBytesCap bounds the bytes one user's unfinished jobs make the
// controller hold (jobBytes): the cluster's max_job_bytes_per_user
// (default 64 MiB), unless Limits.UserBytes sets it. 60 held jobs with
// 3.9 MB scripts once added 1.1 GB, and 3,000 held jobs with long paths
// and 1,024 dependencies each 512 MiB while their scripts weighed 27 KB.
// An array counts once; its subjobs share the parent's record until they
// start.
func (c *Controller) userBytesCap() int64 {
	if c.limits.UserBytes > 0 {
		return c.limits.UserBytes
	}
	if n := c.cfg.Cluster.MaxJobBytesPerUser; n > 0 {
		return n
	}
	return conf.DefaultMaxJobBytesPerUser
}

// jobOverhead is what any job costs beyond its variable-size fields: its
// record's keys, numbers and times (recordFixed), so that many tiny jobs
// are charged too. depOverhead is what a dependency costs beyond its
// strings: its place in the record, the core's copy, their headers.
// BenchmarkHeldJobMemory measures the heap and spool bytes of held jobs
// against what they are charged (largest: 90 KB charged, 83 KB heap,
// 85 KB spool; small: 5.0, 4.3 and 6.2 KB); the spool's in-memory log
// holds up to 8 MiB more in all (largest 95 KB, small 8.5 KB of heap a
// job while it holds them).
const (
	jobOverhead = recordFixed
	depOverhead = 64
	argOverhead = 16
)

// jobBytes is what j makes the controller hold that its user chose the
// size of: every variable-size field (script, environment, command, name,
// paths, dependencies, array spec, image, labels, groups, holds) and
// jobOverhead. Its history is bounded apart (at most 200 entries).
func jobBytes(j *api.Job) int64 {
	n := int64(jobOverhead)
	for _, s := range []string{j.Name, j.Script, j.Shell, j.WorkDir, j.Stdout, j.Stderr, j.Image, j.Join, j.Umask,
		j.Hold, j.ArrayIndices.Text(), j.Share, j.Partition, j.Owner.User, j.Reason, j.Stopping, j.CheckpointNode, string(j.Outcome), j.Resources.Group, j.RerunWhy} {
		n += int64(len(s))
	}
	for k, v := range j.Env {
		n += int64(len(k) + len(v))
	}
	for k, v := range j.Resources.Labels {
		n += int64(len(k) + len(v))
	}
	for _, a := range j.Command {
		n += argOverhead + int64(len(a))
	}
	for _, d := range j.Deps {
		n += depOverhead + int64(len(d.Type.String())+len(d.On))
	}
	n += 4 * int64(len(j.Owner.Groups))
	return n
}

// newJobBytes is jobBytes of a job being submitted, whose default output
// paths (WORKDIR/NAME.oSEQ) are not filled in yet.
func newJobBytes(j *api.Job) int64 {
	n := jobBytes(j)
	for _, p := range []string{j.Stdout, j.Stderr} {
		if p == "" {
			n += int64(len(j.WorkDir) + len(j.Name) + 24)
		}
	}
	return n
}

// errUserBytes is the refusal of n more bytes for a user holding held.
func errUserBytes(user string, held, n, max int64) *api.Error {
	return &api.Error{Code: api.CodeUserLimit, Message: fmt.Sprintf(
		"user %s's unfinished jobs hold %d bytes of scripts, environments, paths, names and dependencies; this job's %d would pass max_job_bytes_per_user, %d: wait for some to finish",
		user, held, n, max)}
}

// checkUserBytes refuses a submit that would take the user over the limit.
func (c *Controller) checkUserBytes(uid uint32, user string, j *api.Job) *api.Error {
	n := newJobBytes(j)
	if held, max := c.userBytes[uid], c.userBytesCap(); held+n > max {
		return errUserBytes(user, held, n, max)
	}
	return nil
}

// checkRecharge refuses a change (qalter) that makes j weigh n bytes if
// that takes its owner over the limit.
func (c *Controller) checkRecharge(j *job, n int64) *api.Error {
	if j.charged == 0 || n <= j.charged {
		return nil
	}
	if held, max := c.userBytes[j.Owner.UID], c.userBytesCap(); held-j.charged+n > max {
		e := errUserBytes(j.Owner.User, held, n-j.charged, max)
		e.ID = j.ID
		return e
	}
	return nil
}

// recharge counts j's bytes again after a change checkRecharge allowed.
func (c *Controller) recharge(j *job) {
	if j.charged == 0 {
		return
	}
	n := jobBytes(&j.Job)
	c.userBytes[j.Owner.UID] += n - j.charged
	j.charged = n
}

// charge counts an unfinished job (not a subjob) against its owner: its
// bytes, and its jobs (an array's subjobs one by one) in its share
// (queuedlimit.go).
func (c *Controller) charge(j *job) {
	if j.ArrayParent != "" || j.finished() || j.charged > 0 {
		return
	}
	j.charged = jobBytes(&j.Job)
	c.userBytes[j.Owner.UID] += j.charged
	j.queued = jobCount(&j.Job)
	c.userJobs[userShare{j.Owner.UID, j.Share}] += j.queued
}

// refund gives back what charge counted, once the job has finished.
func (c *Controller) refund(j *job) {
	if j.charged == 0 {
		return
	}
	uid := j.Owner.UID
	if c.userBytes[uid] -= j.charged; c.userBytes[uid] <= 0 {
		delete(c.userBytes, uid)
	}
	j.charged = 0
	k := userShare{uid, j.Share}
	if c.userJobs[k] -= j.queued; c.userJobs[k] <= 0 {
		delete(c.userJobs, k)
	}
	j.queued = 0
}
