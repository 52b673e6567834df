package sched

import (
	"time"

	"github.com/sharq-hpc/sharq/jobid"
	"github.com/sharq-hpc/sharq/policy"
)

// JobID names a job, e.g. "123.lab" or an array subjob "123[7].lab".
type JobID string

// Strategy says what a share does with its idle quota (policy.Strategy:
// the configuration parses it without the core).
type Strategy = policy.Strategy

// The strategies.
const (
	Reserve       = policy.Reserve
	Lend          = policy.Lend
	LendAndBorrow = policy.LendAndBorrow
)

// ParseStrategy parses RESERVE, LEND or LEND_AND_BORROW.
func ParseStrategy(s string) (Strategy, error) { return policy.ParseStrategy(s) }

// Bounds on what a node may report (NodeUp).
const (
	maxNodeCPUs = 1 << 20
	maxNodeMem  = 1 << 52
)

// Unlimited is the BorrowLimit and PreemptionRetries value meaning "no limit".
const Unlimited = policy.Unlimited

// Config is the part of the cluster configuration the core needs.
type Config struct {
	Partitions []Partition
	Nodes      []Node
	Shares     []Share
	// FairShare orders the borrowers of a partition across shares by their
	// decayed borrowed usage per fair weight (fairshare.go), and the jobs
	// of a share with FairShareUsers by their users' decayed usage; false
	// keeps submission order among borrowers.
	FairShare bool
	// UsageHalfLife is how fast recorded usage decays (Slurm's
	// PriorityDecayHalfLife): usage that old counts half. 0 means
	// DefaultUsageHalfLife.
	UsageHalfLife time.Duration
	// Backfill turns on walltime-aware reservations with EASY backfill
	// (reservation.go). Off, a within-quota job blocked for room holds
	// every later job of its share, and blocked borrowers claim their
	// size of the lendable GPUs in order, for the rest of the pass (issue
	// 13's rules; no reservations, no estimates).
	Backfill bool
	// FairPreemption lets a borrower that fair share would serve first
	// preempt other shares' borrowing jobs (fairpreempt.go): only under
	// FairShare, only jobs wholly beyond their share's quota, only from a
	// share that borrows more per fair weight than the preemptor's share
	// will once it starts. Owners' reclaim is unchanged.
	FairPreemption bool
	// FairPreemptionAfter is how long a borrower must have waited before it
	// may preempt for fair share, and how long a job must have run before
	// it may be preempted for fair share (hysteresis; 0: at once).
	FairPreemptionAfter time.Duration
	// Topologies describe the network as nested domains of nodes
	// (topology.go); a partition names the one its nodes sit in.
	Topologies []Topology
}

// DefaultUsageHalfLife is the half-life of usage when Config sets none
// (Slurm's default PriorityDecayHalfLife).
const DefaultUsageHalfLife = policy.DefaultUsageHalfLife

// Partition groups nodes; shares divide its GPUs.
type Partition struct {
	Name string
	// PreemptionRetries is how often a job may be preempted before it fails
	// instead of going back to the queue; Unlimited for no limit.
	PreemptionRetries int
	// NodeFailureRetries is how often a job may lose a node it runs on
	// before it fails instead of going back to the queue; Unlimited for no
	// limit. Node loss does not use up PreemptionRetries (as AWS Batch's
	// capacity errors do not use up a job's attempts).
	NodeFailureRetries int
	// StartFailureRetries is how often a job's start may fail on a node
	// (bad image, unusable directory: the job's fault) before it fails
	// instead of going back to the queue; Unlimited for no limit.
	StartFailureRetries int
	// CheckpointsLocal: each node keeps its own checkpoints, so a job that
	// goes back to the queue prefers the node it ran on (Job.PreferNode).
	CheckpointsLocal bool
	// DefaultWalltime is what a job that names no walltime counts as for
	// reservations; 0 = such jobs may run forever.
	DefaultWalltime time.Duration
	// PreemptGrace is the grace of a job that asks for none (Job.Grace
	// DefaultGrace); MaxPreemptGrace caps every job's (0: no cap).
	PreemptGrace    time.Duration
	MaxPreemptGrace time.Duration
	// DefaultImage is the container image of a job that names none.
	DefaultImage string
	// Topology names the Config.Topologies entry the partition's nodes sit
	// in; "" for none. DefaultTopologyLevel is the level a job that asks
	// for none is placed by, preferred ("" for none).
	Topology             string
	DefaultTopologyLevel string
	// NeverFitsFailAfter is how long a job the core holds as never
	// fitting (RequestExceedsLimits, QuotaLimitExceeded) stays held
	// before it fails with ReasonNeverFitsTimeLimit (AWS Batch's job state
	// time limit for MISCONFIGURATION reasons); 0 = held until the
	// configuration or the job changes, or it is deleted.
	NeverFitsFailAfter time.Duration
}

// Node is a schedulable machine. A node belongs to exactly one partition.
type Node struct {
	Name      string
	Partition string
	GPUs      int   // GPU indices are 0..GPUs-1
	CPUs      int   // 0: not accounted
	MemBytes  int64 // 0: not accounted
	// Labels are the node's site resources ([[node]] labels, e.g.
	// gpu_type = "a100") that jobs may select.
	Labels map[string]string
	// GPUPeers lists, per GPU index, the GPUs NVLink joins it to, as the
	// configuration declares them (nvlink.go); NodeUp's replace them.
	GPUPeers [][]int
}

// Share is a team's quota inside a partition, with its own virtual queue.
type Share struct {
	Name      string
	Partition string
	GPUs      int // the guaranteed quota
	Strategy  Strategy
	// BorrowLimit is the percentage of GPUs this share may borrow on top of
	// its quota (LendAndBorrow only); Unlimited for no cap.
	BorrowLimit       int
	InSharePreemption bool
	// FairWeight is the share's weight among borrowers under fair share;
	// 0 means its quota (at least 1).
	FairWeight int
	// FairShareUsers orders the share's jobs by their users' decayed
	// usage in the share (under Config.FairShare), priority first.
	FairShareUsers bool
	// MaxRunningJobsPerUser caps the jobs (array subjobs counted one by
	// one) one user runs in the share at once; 0 for no limit.
	MaxRunningJobsPerUser int
	// MaxGPUsPerUser caps the GPUs one user's jobs hold in the share at
	// once; 0 for no limit.
	MaxGPUsPerUser int
}

// DepType is a PBS dependency type (-W depend=TYPE:ID); package jobid
// defines and parses them.
type DepType = jobid.DepType

const (
	AfterOK    = jobid.AfterOK    // start after the job(s) finished with exit status 0
	AfterNotOK = jobid.AfterNotOK // ... finished with a non-zero status (or failed)
	AfterAny   = jobid.AfterAny   // ... finished in any way
	After      = jobid.After      // ... started
)

// ParseDepType parses afterok, afternotok, afterany or after.
func ParseDepType(s string) (DepType, error) { return jobid.ParseDepType(s) }

// Dep is one dependency of a job on another job (or on a whole array, by
// the array's id "123[].lab").
type Dep struct {
	Type DepType
	On   JobID
}

// Hold is a bit set of holds on a job; a held job is never started.
type Hold uint8

const (
	HoldUser   Hold = 1 << iota // qsub -h / qhold by the owner
	HoldAdmin                   // set by an admin; only an admin releases it
	HoldSystem                  // set by the core (a request that can never fit)
)

// Job is a job as the core sees it: what it asks for and where it stands in
// its share's queue.
type Job struct {
	ID       JobID
	Share    string
	User     string // who submitted it: per-user limits and fair share
	Priority int    // 0..9999, higher first
	// Order is PBS's job priority (qsub -p, -1024..1023, higher first):
	// among a share's jobs of equal Priority it decides which goes first.
	// It gives no right to preempt: in-share preemption compares
	// Priority alone, which only an admin raises above a share's default.
	Order int
	Seq   uint64 // submission order (the job number); lower is earlier
	// Place is the job's place among its share's jobs of equal Priority
	// and Order, lower first: 0 for its Seq. qorder (Swapped) exchanges
	// two jobs' places.
	Place  uint64
	Submit time.Time

	// Walltime is the most the job runs once started; 0 = its
	// partition's DefaultWalltime. Reservations count with it, never with
	// how long jobs really run.
	Walltime time.Duration
	// Grace is how long the job may take to exit once stopped (qsub -W
	// grace); DefaultGrace (any negative) for its partition's
	// PreemptGrace. Image is its container image; "" for its partition's
	// DefaultImage. The core only resolves them for its plans.
	Grace time.Duration
	Image string

	Nodes       int   // number of nodes, at least 1
	GPUsPerNode int   // GPUs on each node
	CPUsPerNode int   // 0: not accounted
	MemPerNode  int64 // bytes; 0: not accounted
	// Labels must all be on a node for the job to use it
	// (-l select=1:ngpus=4:gpu_type=a100).
	Labels map[string]string
	// Exclusive is PBS's place=excl: the job's nodes run no other job
	// while it holds them, and it starts only on idle nodes (see
	// exclusive.go for what it is charged and what it never does).
	Exclusive bool

	Hold      Hold
	NotBefore time.Time // qsub -a: not started before this time
	Deps      []Dep

	// Array, when set, makes this an array job: one entry whose subjobs
	// (ID "123[i].lab") are created as they start.
	Array *Array

	// Preemptions counts how often the job was preempted.
	Preemptions int
	// NodeFailures counts how often the job lost a node it ran on.
	NodeFailures int
	// StartFailures counts how often its start failed (StartFailed).
	StartFailures int

	// PreferNode is where the job is placed when that node has room (its
	// first node, for a multi-node job): the node holding its checkpoint.
	// The core sets it when a job of a CheckpointsLocal partition leaves
	// its nodes; a driver gives it back after a restart.
	PreferNode string
	// Interactive (qsub -I): its session cannot survive leaving its
	// nodes, so a preempted interactive job, or one that lost its node,
	// fails (ReasonInteractivePreempted, ReasonInteractiveNodeLost)
	// instead of going back to the queue.
	Interactive bool
	// Topology is its placement by network topology (PBS's
	// place=group=LEVEL; topology.go).
	Topology TopologyRequest
}

// Array describes the subjobs of an array job.
type Array struct {
	Indices    []int // the subjob indices still to run, ascending
	MaxRunning int   // %max; 0 = no limit
}

// GPUCount is the job's total GPU request.
func (j *Job) GPUCount() int { return j.Nodes * j.GPUsPerNode }

// Alloc is the part of a job placed on one node.
type Alloc struct {
	Node string
	GPUs []int // exact GPU indices, ascending
}
