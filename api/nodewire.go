package api

import "fmt"

// The enums of the node wire: each has its constants and one decoder
// (UnmarshalText, which encoding/json uses), so a value outside the set
// fails the whole message instead of being misread.

// RunState is a job's state on a node (JobStateMsg.State).
type RunState string

const (
	RunRunning RunState = "running" // its container runs
	RunExited  RunState = "exited"  // it ended; ExitStatus says how
	RunFailed  RunState = "failed"  // it could not start (NodeFault: the node's fault)
)

// UnmarshalText accepts only the RunState constants.
func (s *RunState) UnmarshalText(b []byte) error {
	switch v := RunState(b); v {
	case RunRunning, RunExited, RunFailed:
		*s = v
		return nil
	}
	return fmt.Errorf("unknown job state on the node wire %.40q", b)
}

// StopReason is why a stop order was sent (StopOrder.Reason).
type StopReason string

const (
	StopDeleted   StopReason = "deleted"   // qdel
	StopPreempted StopReason = "preempted" // the core preempted it
	StopFailed    StopReason = "failed"    // another node's part of the job failed
	StopWalltime  StopReason = "walltime"  // the node's own: the run used up its walltime
	StopUnknown   StopReason = "unknown"   // the controller does not know the job
	StopLease     StopReason = "lease"     // the node's own: its job lease ran out (it lost the controller)
	StopRerun     StopReason = "rerun"     // qrerun: back to the queue once it has exited
	StopNone      StopReason = ""          // no stop: a remove order (MsgRemove) carries none
)

// UnmarshalText accepts only the StopReason constants.
func (r *StopReason) UnmarshalText(b []byte) error {
	switch v := StopReason(b); v {
	case StopDeleted, StopPreempted, StopFailed, StopWalltime, StopUnknown, StopLease, StopRerun, StopNone:
		*r = v
		return nil
	}
	return fmt.Errorf("unknown stop reason on the node wire %.40q", b)
}

// RefusalCode says why the controller refused a node's hello
// (NodeMsg.Code of a welcome with Error set). A node acts on the code,
// never on the Error text, which is for people.
type RefusalCode string

const (
	RefusedSecret  RefusalCode = "bad_secret"   // the secret does not match: retrying cannot help
	RefusedVersion RefusalCode = "bad_version"  // protocol version mismatch
	RefusedNode    RefusalCode = "unknown_node" // the name is not in the configuration (yet)
	// RefusedCert: with mutual TLS, the node's certificate does not name
	// the node it says hello as: retrying with the same certificate
	// cannot help.
	RefusedCert     RefusalCode = "bad_cert"
	RefusedOther    RefusalCode = "refused" // anything else (a later attempt may pass)
	RefusedNoReason RefusalCode = ""        // not refused
)

// UnmarshalText accepts the RefusalCode constants; a code this node does
// not know (a newer controller's) reads as RefusedOther, so it retries.
func (c *RefusalCode) UnmarshalText(b []byte) error {
	switch v := RefusalCode(b); v {
	case RefusedSecret, RefusedVersion, RefusedNode, RefusedCert, RefusedOther, RefusedNoReason:
		*c = v
	default:
		*c = RefusedOther
	}
	return nil
}

// StartRefusal (JobStateMsg.Refusal of a failed run) says that the node
// refused the job itself, so that no other attempt can pass: the controller
// fails it at once (reason StartRefused) instead of retrying it up to
// start_failure_retries. Empty: a failure another attempt may pass.
type StartRefusal string

const (
	StartMayRetry    StartRefusal = ""     // not refused: counted, retried
	StartRefusedPath StartRefusal = "path" // its work directory or an output file is refused for its user
)

// UnmarshalText accepts the StartRefusal constants; one this controller
// does not know (a newer node's) reads as StartMayRetry, the old behaviour.
func (r *StartRefusal) UnmarshalText(b []byte) error {
	switch v := StartRefusal(b); v {
	case StartMayRetry, StartRefusedPath:
		*r = v
	default:
		*r = StartMayRetry
	}
	return nil
}
