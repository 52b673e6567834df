package api

import "time"

// Usage is a job's accounting as the controller keeps it between runs: it
// is in the spool with the job, so that the history record written when the
// job ends (and replayed after a crash) has it. Clients cannot set it: the
// controller clears it on submit.
type Usage struct {
	// Eligible is when the job first could have started: no hold, its
	// dependencies and begin time met.
	Eligible time.Time `json:"eligible,omitzero"`
	// RunBorrowed is how many of the current run's GPUs were beyond the
	// share's quota when it started.
	RunBorrowed int `json:"run_borrowed,omitempty"`
	// StopSent is when the current run was sent SIGTERM for a preemption.
	StopSent time.Time `json:"stop_sent,omitzero"`
	// GPU-seconds over the runs that ended: owned (within the share's
	// quota), borrowed, lost (runs that ended in a preemption) and grace
	// (between SIGTERM and exit of those runs).
	Owned    float64 `json:"owned_gpu_s,omitempty"`
	Borrowed float64 `json:"borrowed_gpu_s,omitempty"`
	Lost     float64 `json:"lost_gpu_s,omitempty"`
	Grace    float64 `json:"grace_gpu_s,omitempty"`
	// Recorded: the history store has the job's final record.
	Recorded bool `json:"recorded,omitempty"`
}
