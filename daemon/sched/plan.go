package sched

import "time"

// Plan is what the core decided since the previous plan. The driver carries
// it out in order: Failed, Requeued, Preempts (SIGTERM), then Starts.
type Plan struct {
	Now      time.Time
	Starts   []Start
	Preempts []Preemption
	Requeued []JobID   // back in the queue (after a preemption exit or node loss)
	Finished []JobID   // removed after a normal exit or cancellation
	Failed   []Failure // failed by the core; removed
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
}

// Failure is a job the core failed, with the reason.
type Failure struct {
	Job    JobID
	Reason Reason
}

// PendingReason is why a pending job did not start in this pass.
type PendingReason struct {
	Job    JobID
	Reason Reason
}
