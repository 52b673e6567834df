package sched

import "time"

// JobState is where a job stands inside the core.
type JobState uint8

const (
	Pending    JobState = iota // queued (possibly held or waiting)
	Running                    // holds its GPUs
	Preempting                 // sent SIGTERM; holds its GPUs until it exits
	Killing                    // cancelled while running; holds its GPUs until it exits
)

var stateNames = [...]string{Pending: "pending", Running: "running", Preempting: "preempting", Killing: "killing"}

func (s JobState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "unknown"
}

// JobInfo is a read-only view of one job (or array job) in the core.
type JobInfo struct {
	Job     Job
	State   JobState
	Reason  Reason  // for pending jobs
	Allocs  []Alloc // for running, preempting and killing jobs
	Started time.Time
	// Running lists an array job's subjobs that hold GPUs.
	Running []JobID
	// Estimate is a pending job's reservation (backfill): when it is
	// expected to start and where; nil without one.
	Estimate *Estimate
}

// ShareUsage is one share's standing, as qstat -Q and the metrics show it.
// All numbers are GPUs, except Pending and Running which count jobs.
type ShareUsage struct {
	Share     string
	Partition string
	Strategy  Strategy
	Quota     int
	InUse     int // GPUs held by the share's jobs
	Borrowed  int // max(0, InUse-Quota)
	Lent      int // the share's idle quota that borrowers use now
	Pending   int
	Running   int
	// FairUsage is the share's decayed borrowed GPU-seconds (fair share,
	// fairshare.go) as of the last Schedule call.
	FairUsage float64
}

// NodeInfo is one node's standing.
type NodeInfo struct {
	Name      string
	Partition string
	Up        bool
	Drained   bool
	GPUs      int
	UsedGPUs  []int // indices held by jobs
}
