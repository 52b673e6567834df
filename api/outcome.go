package api

import "fmt"

// Outcome is how a finished job ended (Job.Outcome): the typed answer that
// history, reports and qstat -x read, instead of guessing from Reason.
type Outcome string

const (
	OutcomeNone      Outcome = ""          // not finished (or finished before outcomes were recorded)
	OutcomeCompleted Outcome = "completed" // exit status 0
	OutcomeFailed    Outcome = "failed"    // a non-zero exit, or failed by the scheduler
	OutcomeDeleted   Outcome = "deleted"   // qdel
)

// UnmarshalText accepts only the Outcome constants.
func (o *Outcome) UnmarshalText(b []byte) error {
	switch v := Outcome(b); v {
	case OutcomeNone, OutcomeCompleted, OutcomeFailed, OutcomeDeleted:
		*o = v
		return nil
	}
	return fmt.Errorf("unknown job outcome %.40q", b)
}

// ExitOutcome is the outcome of a job that ended by itself with status
// (nil: it never ran to an exit).
func ExitOutcome(status *int) Outcome {
	if status != nil && *status == 0 {
		return OutcomeCompleted
	}
	return OutcomeFailed
}
