package sched

import "time"

// Plan is what the core decided since the previous plan, complete enough
// that a driver only carries it out: it reconstructs nothing (no counter
// diffing, no quota arithmetic, no defaults of its own). The driver carries
// it out in order: Failed, Requeued, Finished, Preempts (SIGTERM), Starts,
// then Holds and Pending.
type Plan struct {
	Now      time.Time
	Starts   []Start
	Preempts []Preemption
	Requeued []Requeue // back in the queue (after a preemption exit, node loss or failed start)
	Finished []JobID   // removed after a normal exit or cancellation
	Failed   []Failure // failed by the core; removed
	// Holds are the system holds the core set on pending jobs that can
	// never fit, and released once they fit, in the order it decided them.
	Holds []HoldChange
	// Pending lists the pending jobs whose reason changed since the last plan.
	Pending []PendingReason
}

// Start places a job: one Alloc per node.
type Start struct {
	Job    JobID
	Share  string
	Allocs []Alloc
	// Array and Index are set when the start creates subjob Index of Array.
	Array JobID
	Index int
	// Borrowed is how many of the start's GPUs are beyond its share's
	// quota, counting what the share held when it started (the starts
	// before it in this plan included). The run keeps that split until
	// it ends.
	Borrowed int
	// Walltime, Grace and Image are the job's, resolved against its
	// partition: its walltime or the partition's DefaultWalltime (0: no
	// limit), its grace or the partition's PreemptGrace capped by
	// MaxPreemptGrace, its image or the partition's DefaultImage.
	Walltime time.Duration
	Grace    time.Duration
	Image    string
}

// PreemptKind says why a job is preempted.
type PreemptKind uint8

const (
	CrossShare PreemptKind = iota // its share borrowed GPUs whose owner wants them back
	InShare                       // a higher-priority job of its own share needs them
	FairShare                     // it borrows, and a share that borrows less per fair weight needs its GPUs
)

func (k PreemptKind) String() string {
	switch k {
	case InShare:
		return "in_share"
	case FairShare:
		return "fair_share"
	}
	return "cross_share"
}

// Preemption asks the driver to stop Victim (SIGTERM, grace, SIGKILL) so that
// For can start. Victim keeps its GPUs until Exited is applied for it.
type Preemption struct {
	Victim JobID
	For    JobID
	Kind   PreemptKind
	// Grace is the victim's grace, resolved against its partition as it
	// is now (Start.Grace).
	Grace time.Duration
}

// RequeueCause says why a job that held GPUs went back to the queue or
// failed.
type RequeueCause uint8

const (
	CausePreempted    RequeueCause = iota + 1 // it exited after the core preempted it
	CauseNodeLost                             // a node it ran on went down
	CauseStartFailed                          // its start failed on a node (StartFailed)
	CauseStartRefused                         // a node refused the job itself (StartFailed.Refused)
)

func (c RequeueCause) String() string {
	switch c {
	case CausePreempted:
		return "preempted"
	case CauseNodeLost:
		return "node_lost"
	case CauseStartFailed:
		return "start_failed"
	case CauseStartRefused:
		return "start_refused"
	}
	return "none"
}

// Counts are how often a job was preempted, lost a node and failed to
// start, as the core counted them (Job's fields of those names).
type Counts struct {
	Preemptions   int
	NodeFailures  int
	StartFailures int
}

// Of returns the count cause adds to.
func (c Counts) Of(cause RequeueCause) int {
	switch cause {
	case CausePreempted:
		return c.Preemptions
	case CauseNodeLost:
		return c.NodeFailures
	case CauseStartFailed, CauseStartRefused:
		return c.StartFailures
	}
	return 0
}

// Requeue is a job the core put back in its queue, why, and its counts
// after this requeue.
type Requeue struct {
	Job    JobID
	Cause  RequeueCause
	Counts Counts
	// PreferNode is where the core will prefer to restart it (the node
	// holding its checkpoint; Job.PreferNode), "" for anywhere.
	PreferNode string
}

// Failure is a job the core failed, with the reason; a job failed past a
// retry limit has its Cause and its Counts after the failure that ended it.
type Failure struct {
	Job    JobID
	Reason Reason
	Cause  RequeueCause // 0 for a pending job failed (e.g. a dependency never met)
	Counts Counts
}

// HoldChange is a hold the core set on a pending job (Set) or released.
type HoldChange struct {
	Job    JobID
	Bit    Hold
	Set    bool
	Reason Reason // why, for a hold set (ReasonNeverFits, ReasonQuotaLimit)
}

// PendingReason is why a pending job did not start in this pass.
type PendingReason struct {
	Job    JobID
	Reason Reason
}
