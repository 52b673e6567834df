package sched

import "time"

// Event is an input to the core. The concrete types below are the only
// events; Apply rejects others.
type Event interface{ isEvent() }

// Submitted adds a pending job (or array job) to its share's queue.
//
// Restored marks a job the controller had accepted before it restarted
// (it submits them after the DependencyOutcome and Adopted events, each
// after the jobs it depends on). Such a job is not refused where the
// world changed while the controller was down:
//   - a share the configuration no longer has keeps it under a ghost
//     share, where it waits, never started (ReasonShareRemoved), as a
//     ConfigReplaced leaves it;
//   - a dependency on a job the core does not know was met: a job whose
//     dependency can no longer be met fails when that becomes so, and the
//     spool drops only jobs that ended longer ago than it keeps them. It
//     is dropped (and stays met when a JobAltered gives it back).
//
// Ran says the job ran before (a requeued job): "after" dependencies on it
// stay met, and its dependencies can no longer change (JobAltered).
type Submitted struct {
	Job      Job
	Restored bool
	Ran      bool
}

// Adopted restores a job that is already running (controller restart):
// it holds Allocs at once. Preempting marks a job that had been sent SIGTERM.
// An allocation on a node the configuration no longer has holds a ghost
// node, as ConfigReplaced leaves one; the job leaves it at NodeDown (its
// node lost) or Exited.
type Adopted struct {
	Job        Job
	Allocs     []Alloc
	Started    time.Time
	Preempting bool
}

// Cancelled removes a pending job, or marks a running one as being killed:
// its GPUs stay busy until Exited arrives.
type Cancelled struct{ ID JobID }

// Exited reports that a running job's processes are gone. ExitStatus
// follows PBS (the script's code, or 256+signal). A job that the core had
// preempted is requeued (or failed once its retries are used up); any other
// job is finished and removed.
type Exited struct {
	ID         JobID
	ExitStatus int
}

// StartFailed reports that a started job could not start on its node
// through its own fault (bad image, unusable work directory), every part
// of it ended. The core counts it (Job.StartFailures) and puts the job back
// in its queue, or fails it with ReasonStartFailureRetries once it failed
// more often than its partition's StartFailureRetries.
type StartFailed struct {
	ID JobID
	// Refused: the node refused the job itself (a path its user may not
	// use), which no retry can pass: it fails at once with
	// ReasonStartRefused.
	Refused bool
}

// Requeued puts a running job back in its queue at its original position,
// without counting a preemption (e.g. its start failed on the node). With
// NodeLost it counts as losing its node, as NodeDown's jobs do (its node
// stopped it: the node's job lease ran out).
type Requeued struct {
	ID       JobID
	NodeLost bool
}

// Moved puts a pending job in another share of its partition (qmove), with
// the Priority and Order it has there; it waits there as a job of that
// share, at the place its priority, order and submission give it. Only a
// job that waits as a whole may move: not a subjob, not an array some of
// whose subjobs have started, nothing running or ended.
type Moved struct {
	ID       JobID
	Share    string
	Priority int
	Order    int
}

// Swapped exchanges the places of two pending jobs of one share (qorder):
// their Priority, Order and Place, so that each waits where the other
// did. Neither may be an array or a subjob.
type Swapped struct{ A, B JobID }

// PriorityChanged sets a job's priority and order (Job.Order); it is
// re-evaluated at the next pass.
type PriorityChanged struct {
	ID       JobID
	Priority int
	Order    int
}

// HoldChanged sets (Set) or clears (!Set) hold bits on a pending job.
type HoldChanged struct {
	ID  JobID
	Set bool
	Bit Hold
}

// JobAltered replaces what may change on a pending job (qalter): name-level
// fields are the driver's; the core takes Priority, Order, NotBefore, Deps
// and Walltime (0: the partition's default).
type JobAltered struct {
	ID        JobID
	Priority  int
	Order     int
	NotBefore time.Time
	Deps      []Dep
	Walltime  time.Duration
}

// NodeUp marks a node usable. GPUs, when positive, is the number of GPUs
// the node really has (it overrides the declared count). CPUs and MemBytes,
// when positive, are what the node reports having: they are accounted where
// the configuration declares none (a declared count wins, so that an
// admin may keep some for the system).
type NodeUp struct {
	Node     string
	GPUs     int
	CPUs     int
	MemBytes int64
	// GPUPeers, when set, are the node's NVLink peers per GPU index as its
	// NVML reported them: they replace the configuration's (nvlink.go).
	GPUPeers [][]int
}

// NodeDown marks a node unusable; its running jobs are treated as preempted
// (requeued, or failed once their retries are used up). A ghost node (one
// the configuration no longer has, kept for the jobs still on it) may be
// named too: its jobs lost their node.
type NodeDown struct{ Node string }

// NodeDrained stops new jobs on a node; running ones finish.
type NodeDrained struct{ Node string }

// NodeResumed undoes NodeDrained.
type NodeResumed struct{ Node string }

// ConfigReplaced installs a new configuration. Running jobs keep running;
// jobs of removed shares stay until they end but are never started.
type ConfigReplaced struct{ Config Config }

// DependencyOutcome tells the core how a job that is no longer in it ended,
// so that dependencies on it resolve; the controller sends one for each
// finished job a pending job may depend on when it restores its state after
// a restart (before the Submitted events of the dependent jobs). Started says
// whether the job ever ran; ExitStatus is its exit status (PBS: the script's
// code, or 256+signal); Cancelled marks a job deleted by qdel; Failed a job
// the core (or the controller) failed. For an array job, ID is the array id
// ("123[].lab") and ExitStatus is 0 only when every subjob exited with 0.
// It is an ErrInvalid for a job the core holds, and an ErrDuplicateJob for
// one whose end the core knows already.
type DependencyOutcome struct {
	ID         JobID
	ExitStatus int
	Started    bool
	Cancelled  bool
	Failed     bool
}

// Forgotten says the driver no longer keeps these finished jobs (its spool
// purged them): the core drops how they ended, which it otherwise keeps,
// for the dependencies on them, for as long as it runs. An outcome that a
// job the core holds names in its dependencies stays (it costs little, and
// a JobAltered gives that dependency back). Ids the core has no outcome
// for are ignored; one it still holds as a job is an ErrInvalid.
type Forgotten struct{ IDs []JobID }

func (Submitted) isEvent()         {}
func (Moved) isEvent()             {}
func (Swapped) isEvent()           {}
func (Forgotten) isEvent()         {}
func (Adopted) isEvent()           {}
func (StartFailed) isEvent()       {}
func (Cancelled) isEvent()         {}
func (Exited) isEvent()            {}
func (Requeued) isEvent()          {}
func (PriorityChanged) isEvent()   {}
func (HoldChanged) isEvent()       {}
func (JobAltered) isEvent()        {}
func (NodeUp) isEvent()            {}
func (NodeDown) isEvent()          {}
func (NodeDrained) isEvent()       {}
func (NodeResumed) isEvent()       {}
func (ConfigReplaced) isEvent()    {}
func (DependencyOutcome) isEvent() {}
