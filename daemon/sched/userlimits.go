package sched

// Limits per user inside a share (issue 14 item 3; Slurm's MaxJobsPerUser
// and MaxTRESPerUser, PBS's max_run_res): Share.MaxRunningJobsPerUser caps
// the jobs one user's holds GPUs with in the share (every array subjob is
// one job), Share.MaxGPUsPerUser the GPUs they hold. A preemptor's
// nomination counts as running. A job that would pass a limit waits with
// ReasonUserJobLimit or ReasonUserGPULimit; it blocks nothing else of its
// share (other users' jobs, and the user's smaller jobs under the GPU
// limit, go on). A limit lowered by a reload stops new starts; running
// jobs keep running.

// userState is what one user holds in one share.
type userState struct {
	jobs, gpus       int // jobs holding GPUs in the share, and their GPUs
	nomJobs, nomGPUs int // nominations of the user's preemptors
}

// perUser says whether the share keeps one queue per user.
func perUser(c Share) bool {
	return c.FairShareUsers || c.MaxRunningJobsPerUser > 0 || c.MaxGPUsPerUser > 0
}

func (sh *share) userOf(name string) *userState {
	if sh.users == nil {
		sh.users = map[string]*userState{}
	}
	u := sh.users[name]
	if u == nil {
		u = &userState{}
		sh.users[name] = u
	}
	return u
}

// userCount is which of a user's counts userAdd changes.
type userCount uint8

const (
	userHeld      userCount = iota // jobs holding GPUs, and their GPUs
	userNominated                  // preemptors' nominations, and their GPUs
)

// userAdd counts (sign +1) or uncounts (sign -1) a job and gpus of its
// GPUs for its user, as held or nominated.
func (s *Scheduler) userAdd(j *job, sign int, gpus int, c userCount) {
	sh := j.share
	if sh == nil {
		return
	}
	u := sh.userOf(j.User)
	s.markRates(sh)
	if c == userNominated {
		u.nomJobs += sign
		u.nomGPUs += sign * gpus
	} else {
		u.jobs += sign
		u.gpus += sign * gpus
	}
	if *u == (userState{}) {
		delete(sh.users, j.User)
	}
	if sign < 0 && (sh.cfg.MaxRunningJobsPerUser > 0 || sh.cfg.MaxGPUsPerUser > 0) {
		s.markDirty(sh) // the user's waiting jobs may start now
	}
}

// userLimit is the per-user limit j would pass by starting now, or
// ReasonNone.
func userLimit(sh *share, j *job) Reason {
	c := sh.cfg
	if sh.removed || (c.MaxRunningJobsPerUser <= 0 && c.MaxGPUsPerUser <= 0) {
		return ReasonNone
	}
	var u userState
	if x := sh.users[j.User]; x != nil {
		u = *x
	}
	switch {
	case c.MaxRunningJobsPerUser > 0 && u.jobs+u.nomJobs+1 > c.MaxRunningJobsPerUser:
		return ReasonUserJobLimit
	case c.MaxGPUsPerUser > 0 && u.gpus+u.nomGPUs+j.charge() > c.MaxGPUsPerUser:
		return ReasonUserGPULimit
	}
	return ReasonNone
}

// skipUserLimited handles the cursor's job when its user is at a limit:
// the job gets the limit's reason and the cursor moves on (past the whole
// user once userLimitMarks of its jobs were marked, or at once for the job
// limit, which every job of the user is at). It reports whether it moved.
func (s *Scheduler) skipUserLimited(sh *share, j *job) bool {
	r := userLimit(sh, j)
	if r == ReasonNone {
		return false
	}
	s.setReason(j, r)
	if j.scanGen != s.scanSeq {
		j.scanGen = s.scanSeq
		sh.scanned = append(sh.scanned, j)
	}
	c := &sh.cur
	t := c.top()
	t.marks++
	if t.marks >= userLimitMarks {
		c.dropTop()
		return true
	}
	if r == ReasonUserJobLimit {
		// Every pending job of the user is at this limit: mark the next
		// few, then pass over the rest.
		for t.marks < userLimitMarks {
			t.c.next()
			if !t.c.valid() {
				break
			}
			x := t.c.job()
			if x.inReady && x.state == Pending && x.nom == nil {
				s.setReason(x, r)
				if x.scanGen != s.scanSeq {
					x.scanGen = s.scanSeq
					sh.scanned = append(sh.scanned, x)
				}
				t.marks++
			}
		}
		c.dropTop()
		return true
	}
	c.next()
	return true
}
