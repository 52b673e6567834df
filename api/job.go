package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/sharq-hpc/sharq/jobid"
)

// State is a job's PBS state letter.
type State string

const (
	StateQueued   State = "Q" // pending
	StateHeld     State = "H" // held (user, admin or system)
	StateWaiting  State = "W" // qsub -a time not reached
	StateRunning  State = "R" // running (or being preempted)
	StateExiting  State = "E" // stop sent, waiting for the exit
	StateFinished State = "F" // finished, failed or deleted (qstat -x)
	StateArray    State = "B" // array job with subjobs running
)

// ReasonNodeUnreachable is the Reason of a running job whose node the
// controller has not heard from for node_timeout: it stays running (the
// node stops it once its job lease runs out) until RequeueAt.
const ReasonNodeUnreachable = "NodeUnreachable"

// Owner is who submitted a job, as the kernel told the controller.
type Owner struct {
	User   string   `json:"user"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// Resources is what a job asks for (per node, except Nodes).
type Resources struct {
	Nodes       int           `json:"nodes"`         // at least 1
	GPUsPerNode int           `json:"gpus_per_node"` // ngpus
	CPUsPerNode int           `json:"cpus_per_node,omitempty"`
	MemPerNode  int64         `json:"mem_per_node,omitempty"` // bytes
	Walltime    time.Duration `json:"walltime,omitempty"`     // 0: the partition's default_walltime
	// MPIProcs is the MPI ranks per node: each node's line count in
	// PBS_NODEFILE (0: one). OMPThreads is OMP_NUM_THREADS (0: NCPUS over
	// the ranks, when ncpus is given).
	MPIProcs   int `json:"mpiprocs,omitempty"`
	OMPThreads int `json:"ompthreads,omitempty"`
	// Labels are node labels every node of the job must carry
	// (-l select=1:ngpus=4:gpu_type=a100; [[node]] labels).
	Labels map[string]string `json:"labels,omitempty"`
	// Exclusive is PBS's place=excl: no other job runs on the job's nodes
	// while it runs (its share is charged every GPU of those nodes).
	Exclusive bool `json:"exclusive,omitempty"`
	// Group is a topology level of the job's partition (PBS's
	// place=group=LEVEL): all its nodes in one domain of that level.
	// GroupPreferred makes it best-effort, as few domains as possible
	// (place=prefer_group=LEVEL); GroupWait keeps it required for at
	// most that long from when the job began waiting, then preferred
	// (place=group=LEVEL@TIME, Slurm's --switches=1@TIME).
	Group          string        `json:"group,omitempty"`
	GroupPreferred bool          `json:"group_preferred,omitempty"`
	GroupWait      time.Duration `json:"group_wait,omitempty"`
}

// Dep is one -W depend= entry.
type Dep struct {
	Type jobid.DepType `json:"type"` // afterok, afternotok, afterany, after on the wire
	On   string        `json:"on"`   // job id
}

// UnmarshalJSON reads a dependency; one without a type is refused (the
// zero DepType is afterok, which it must not become).
func (d *Dep) UnmarshalJSON(b []byte) error {
	var w struct {
		Type *jobid.DepType `json:"type"`
		On   string         `json:"on"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Type == nil {
		return fmt.Errorf("%w: dependency on %.40q without a type", jobid.ErrBadDepend, w.On)
	}
	d.Type, d.On = *w.Type, w.On
	return nil
}

// Alloc is the part of a running job on one node.
type Alloc struct {
	Node string `json:"node"`
	GPUs []int  `json:"gpus"`
}

// Estimated is where and when the scheduling core expects a pending job
// to start: its reservation.
type Estimated struct {
	StartTime time.Time `json:"start_time"`
	Allocs    []Alloc   `json:"allocs"`
}

// HistoryEntry is one state change of a job.
type HistoryEntry struct {
	Time  time.Time `json:"time"`
	State State     `json:"state"`
	What  string    `json:"what"` // e.g. "submitted", "started on gpu01 [0 1]", "preempted for 12.lab (cross_share)"
}

// ArrayStates is PBS's array_state_count: an array's subjobs that have not
// started or wait again (Queued, held ones included), run, are stopping,
// or are done (Expired).
type ArrayStates struct {
	Queued  int `json:"queued"`
	Running int `json:"running"`
	Exiting int `json:"exiting"`
	Expired int `json:"expired"`
}

// Job is the controller's record of a job: what was submitted, where it is
// and what happened to it. It is what the spool stores and qstat shows.
type Job struct {
	ID    string `json:"id"` // "123.lab", "123[].lab", "123[7].lab"
	Seq   uint64 `json:"seq"`
	Name  string `json:"name"`
	Owner Owner  `json:"owner"`
	Share string `json:"share"` // the PBS queue
	// Partition is the share's partition at submit time.
	Partition string `json:"partition"`
	Priority  int    `json:"priority"`
	// PBSPriority is PBS's job priority (qsub -p, qalter -p:
	// MinPBSPriority..MaxPBSPriority, 0 by default), which any user may
	// set: it orders the share's jobs of equal Priority, and gives no
	// right to preempt (Priority does, which only admins raise above the
	// share's priority_default).
	PBSPriority int `json:"pbs_priority,omitempty"`
	// QueuePlace is the job's place among its share's jobs of equal
	// priorities, lower first; 0 means Seq. qorder exchanges two jobs'
	// places (and their priorities with them).
	QueuePlace uint64 `json:"queue_place,omitempty"`

	Script  string            `json:"script,omitempty"`  // script body (run with Shell, its #! line's interpreter, or /bin/sh)
	Shell   string            `json:"shell,omitempty"`   // qsub -S: absolute path of the script's interpreter
	Command []string          `json:"command,omitempty"` // or argv (qsub -- cmd args)
	WorkDir string            `json:"workdir"`           // PBS_O_WORKDIR
	Env     map[string]string `json:"env,omitempty"`     // -v / -V and PBS_O_* variables
	Stdout  string            `json:"stdout"`            // absolute paths
	Stderr  string            `json:"stderr"`            // equal to Stdout with -j oe
	Image   string            `json:"image,omitempty"`   // "" = partition default
	Grace   time.Duration     `json:"grace,omitempty"`   // -W grace; 0 = partition default

	// Join is qsub -j: "oe" (stderr goes to the stdout file), "eo" (the
	// reverse) or "". With Stdout and Stderr empty the controller fills the
	// default path (WorkDir/NAME.oSEQ, or .eSEQ for "eo") into both. A -o or
	// -e path ending in "/" is a directory that gets the default file name.
	Join string `json:"join,omitempty"`
	// Umask is qsub -W umask (octal digits, ParseUmask): the job's
	// processes' umask and its output files' mode (0666 less it). "" is
	// DefaultUmask.
	Umask string `json:"umask,omitempty"`

	Resources Resources `json:"resources"`
	Hold      string    `json:"hold,omitempty"` // "", "u", "o" (admin), "s" (system), combined e.g. "uo"
	NotBefore time.Time `json:"not_before,omitzero"`
	Deps      []Dep     `json:"deps,omitempty"`

	// Array fields: ArrayIndices on the parent ("0-99:2" on the wire; the
	// zero Range on any other job), ArrayMax its %max, ArrayParent and
	// ArrayIndex on a subjob.
	ArrayIndices jobid.Range `json:"array_indices,omitzero"`
	ArrayMax     int         `json:"array_max,omitempty"`
	ArrayParent  string      `json:"array_parent,omitempty"`
	ArrayIndex   int         `json:"array_index,omitempty"`
	// ArrayStates counts an array job's subjobs by state. qstat's answer
	// fills it in; it is never stored.
	ArrayStates *ArrayStates `json:"array_states,omitempty"`
	// Interactive is qsub -I (see JobSpec.Interactive).
	Interactive bool `json:"interactive,omitempty"`

	State State `json:"state"`
	// Stopping says why a stop was sent to a running job: "deleted",
	// "preempted", or "failed" (another node's part of it failed).
	Stopping string  `json:"stopping,omitempty"`
	Reason   string  `json:"reason,omitempty"` // typed pending or failure reason, as the core names it
	Allocs   []Alloc `json:"allocs,omitempty"`

	// RerunWhy is why a job stopping with Stopping "rerun" goes back to
	// its queue when it was not qrerun: a GPU fault, its idle GPUs.
	RerunWhy string `json:"rerun_why,omitempty"`

	// RequeueAt: a running job whose node is unreachable
	// (ReasonNodeUnreachable) goes back to the queue then, once the node's
	// job lease has surely run out, unless the node comes back first.
	RequeueAt time.Time `json:"requeue_at,omitzero"`
	// Estimated is a pending job's reservation (backfill): when the
	// scheduling core expects it to start and on which nodes and GPUs
	// (PBS's estimated.start_time and estimated.exec_vnode). qstat's
	// answer fills it in; it is never stored.
	Estimated *Estimated `json:"estimated,omitempty"`
	// Domains are where a running job sits in its partition's topology,
	// "LEVEL=NAME" at the level it asked for (else the partition's
	// default level, else the innermost): qstat -f's answer fills it in;
	// it is never stored.
	Domains     []string `json:"domains,omitempty"`
	Preemptions int      `json:"preemptions"` // times preempted
	// NodeFailures is how often the job was requeued after losing a node.
	NodeFailures int `json:"node_failures,omitempty"`
	// StartFailures is how often its start failed on a node through its
	// own fault (the core counts them against start_failure_retries).
	StartFailures int `json:"start_failures,omitempty"`
	// CheckpointNode is the node that holds the job's checkpoint where its
	// partition keeps checkpoints node-local (checkpoints = "local"): a
	// requeued job is placed there when the node has room.
	CheckpointNode string `json:"checkpoint_node,omitempty"`
	Runs           int    `json:"runs"` // times started; run N's SHARQ_RESTART_COUNT is N-1
	ExitStatus     *int   `json:"exit_status,omitempty"`
	// Outcome is how a finished job ended.
	Outcome    Outcome   `json:"outcome,omitempty"`
	SubmitTime time.Time `json:"submit_time"`
	StartTime  time.Time `json:"start_time,omitzero"`
	EndTime    time.Time `json:"end_time,omitzero"`
	// Used is the run time summed over all runs (Time Use in qstat).
	Used    time.Duration  `json:"used,omitempty"`
	History []HistoryEntry `json:"history,omitempty"`
	// Acct is the job's accounting (see Usage).
	Acct Usage `json:"acct,omitzero"`
	// GPUUse is how its last run used its GPUs, as its nodes sampled them
	// (api/gpuuse.go); nil before the first sample.
	GPUUse *GPUUse `json:"gpu_use,omitempty"`
	// GPURun is a finished job's last run's GPU use, as its history keeps
	// it (set when it finishes; nil: never sampled).
	GPURun *GPURun `json:"gpu_run,omitempty"`
}

// DefaultUmask is a job's umask unless it asks for another (qsub -W
// umask=022), PBS's default: the job's output files (mode 0600) and what
// it writes are its owner's alone.
const DefaultUmask = 0o077

// ParseUmask reads qsub -W umask's value: one to four octal digits, at
// most 0777 ("022", "0007"); "" is DefaultUmask.
func ParseUmask(s string) (uint32, error) {
	if s == "" {
		return DefaultUmask, nil
	}
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil || len(s) > 4 || v > 0o777 {
		return 0, fmt.Errorf("umask %q: want octal digits from 0 to 0777, e.g. 022", s)
	}
	return uint32(v), nil
}
