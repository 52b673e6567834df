package ctld

import "github.com/sharq-hpc/sharq/api"

// Other users see a job the way PBS shows it in a summary: its name,
// owner, queue, state, resources and times. What may hold secrets (the
// environment, the script, the command and its interpreter) only its
// owner and admins see.

// mayRead says whether id sees j's environment, script and command.
func (c *Controller) mayRead(id Identity, j *api.Job) bool {
	return j.Owner.UID == id.UID || c.auth.isAdmin(id)
}

// redact clears rec's secrets unless id may read them.
func (c *Controller) redact(id Identity, rec *api.Job) {
	if !c.mayRead(id, rec) {
		clearSecrets(rec)
	}
}

// clearSecrets clears what may hold secrets: the environment, the script,
// the command and its interpreter. A purged job's record from the history
// is redacted with it too (viewer.redact).
func clearSecrets(rec *api.Job) { rec.Env, rec.Script, rec.Command, rec.Shell = nil, "", nil, "" }

// redacted is a copy of j's record as id may see it.
func (c *Controller) redacted(id Identity, j *job) api.Job {
	rec := j.Job
	c.redact(id, &rec)
	return rec
}
