package ctld

import (
	"fmt"

	"github.com/sharq-hpc/sharq/api"
)

// defaultUserBytes bounds (Limits.UserBytes) the bytes of scripts, environments and commands one
// user's unfinished jobs hold in the controller's memory (and spool): 60
// held jobs with 3.9 MB scripts once added 1.1 GB. An array counts once;
// its subjobs share the parent's script.
const defaultUserBytes = 64 << 20

// specBytes is what j's script, environment and command weigh.
func specBytes(j *api.Job) int64 {
	n := int64(len(j.Script) + len(j.Shell))
	for k, v := range j.Env {
		n += int64(len(k) + len(v))
	}
	for _, a := range j.Command {
		n += int64(len(a))
	}
	return n
}

// checkUserBytes refuses a submit that would take the user over the limit.
func (c *Controller) checkUserBytes(uid uint32, user string, j *api.Job) *api.Error {
	n := specBytes(j)
	max := c.limits.UserBytes
	if held := c.userBytes[uid]; held+n > max {
		return &api.Error{Code: api.CodeBadRequest, Message: fmt.Sprintf(
			"user %s's unfinished jobs hold %d bytes of scripts and environments; this job's %d would pass the limit of %d: wait for some to finish",
			user, held, n, max)}
	}
	return nil
}

// charge counts an unfinished job (not a subjob) against its owner.
func (c *Controller) charge(j *job) {
	if j.ArrayParent != "" || j.finished() || j.charged > 0 {
		return
	}
	j.charged = specBytes(&j.Job)
	c.userBytes[j.Owner.UID] += j.charged
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
}
