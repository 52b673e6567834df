package api

import (
	"time"

	"github.com/sharq-hpc/sharq/jobid"
)

// Version is the protocol version; a peer refuses a request of another one.
const Version = 1

// MaxMessage bounds one message on the wire (a 10,000-subjob array fits).
const MaxMessage = 4 << 20

// Op names a client request.
type Op string

const (
	OpSubmit      Op = "submit"      // Submit
	OpStat        Op = "stat"        // Stat
	OpDelete      Op = "delete"      // IDs
	OpHold        Op = "hold"        // IDs
	OpRelease     Op = "release"     // IDs
	OpAlter       Op = "alter"       // Alter
	OpShares      Op = "shares"      // qstat -Q
	OpNodes       Op = "nodes"       // sharqctl show nodes
	OpControllers Op = "controllers" // sharqctl show controllers
	OpConfig      Op = "config"      // sharqctl show config
	OpReconfigure Op = "reconfigure" // admin
	OpDrain       Op = "drain"       // admin; Node
	OpResume      Op = "resume"      // admin; Node
	OpWait        Op = "wait"        // block until IDs[0] ends (qsub -W block=true)
	OpReport      Op = "report"      // Report: the job history (sharqctl report)
	OpSignal      Op = "signal"      // qsig: IDs, Signal
	OpRerun       Op = "rerun"       // qrerun: IDs
	OpMove        Op = "move"        // qmove: IDs, Share
	OpOrder       Op = "order"       // qorder: IDs (two)
	OpComment     Op = "comment"     // admin; Node, Comment (pbsnodes -C)
)

// MaxNodeComment bounds an admin's comment on a node (pbsnodes -C), in
// bytes.
const MaxNodeComment = 256

// Request is one client request. The caller's identity is not in it: the
// controller takes it from the socket (SO_PEERCRED).
type Request struct {
	V      int         `json:"v"`
	Op     Op          `json:"op"`
	IDs    []string    `json:"ids,omitempty"`
	Submit *SubmitSpec `json:"submit,omitempty"`
	Stat   *StatFilter `json:"stat,omitempty"`
	Alter  *AlterSpec  `json:"alter,omitempty"`
	Node   string      `json:"node,omitempty"`
	Report *ReportSpec `json:"report,omitempty"`
	// Force is qdel -W force (admins only): stop without grace.
	Force bool `json:"force,omitempty"`
	// Session is OpSession's request.
	Session *SessionSpec `json:"session,omitempty"`
	// Signal is OpSignal's signal (qsig -s).
	Signal Signal `json:"signal,omitempty"`
	// Share is OpMove's destination share (qmove).
	Share string `json:"share,omitempty"`
	// Comment is the admin's comment on Node (pbsnodes -C): OpComment's,
	// and OpDrain's or OpResume's when not nil; "" removes it.
	Comment *string `json:"comment,omitempty"`
}

// SubmitSpec is a new job as qsub sends it.
type SubmitSpec struct {
	Job JobSpec `json:"job"`
	// Priority is sharq's own priority (0..9999); nil means the share's
	// priority_default.
	Priority *int `json:"priority,omitempty"`
	// PBSPriority is qsub -p, on PBS's scale (MinPBSPriority..MaxPBSPriority,
	// 0 = the share's default); the controller maps it onto sharq's.
	PBSPriority *int `json:"pbs_priority,omitempty"`
	// RequestID makes a submission idempotent: a client that retries a
	// submit whose answer it lost (a failover) sends the same id, and the
	// controller answers a repeated id of the same user with the job it
	// already made. The client package fills in a random one; at most
	// MaxRequestID bytes of [A-Za-z0-9_-], "" = none.
	RequestID string `json:"request_id,omitempty"`
}

// MaxRequestID bounds SubmitSpec.RequestID.
const MaxRequestID = 64

// JobSpec is what a user asks for in a submit: the user's fields of a job
// and nothing else. The controller's record (Job) is made from it; its
// other fields (id, owner, state, array parent and index, stopping, runs,
// history...) are the controller's alone and cannot be set from the wire.
// The JSON names are those of Job's fields.
type JobSpec struct {
	Name    string            `json:"name,omitempty"`
	Share   string            `json:"share"`             // the PBS queue
	Script  string            `json:"script,omitempty"`  // script body
	Shell   string            `json:"shell,omitempty"`   // qsub -S
	Command []string          `json:"command,omitempty"` // or argv (qsub -- cmd args)
	WorkDir string            `json:"workdir"`           // absolute
	Env     map[string]string `json:"env,omitempty"`     // -v / -V and PBS_O_* variables
	Stdout  string            `json:"stdout,omitempty"`  // absolute paths; "" = the default
	Stderr  string            `json:"stderr,omitempty"`
	Image   string            `json:"image,omitempty"` // "" = partition default
	Grace   time.Duration     `json:"grace,omitempty"` // -W grace; 0 = partition default
	Join    string            `json:"join,omitempty"`  // "oe", "eo", "n" or "" (see Job.Join)
	Umask   string            `json:"umask,omitempty"` // -W umask: octal digits; "" = DefaultUmask

	Resources Resources `json:"resources"`
	// Hold is qsub -h: "u" (a user hold); an admin may also give "o".
	Hold      string    `json:"hold,omitempty"`
	NotBefore time.Time `json:"not_before,omitzero"` // qsub -a
	Deps      []Dep     `json:"deps,omitempty"`

	// ArrayIndices is qsub -J ("0-99:2" on the wire; the zero Range: no
	// array), ArrayMax its %max.
	ArrayIndices jobid.Range `json:"array_indices,omitzero"`
	ArrayMax     int         `json:"array_max,omitempty"`

	// Interactive is qsub -I: the job's container waits for a session
	// (Command, or the user's login shell, on a terminal) and the job ends
	// with it.
	Interactive bool `json:"interactive,omitempty"`
}

// PBS's priority range (qsub -p, qalter -p).
const (
	MinPBSPriority = -1024
	MaxPBSPriority = 1023
)

// StatFilter selects jobs for qstat.
type StatFilter struct {
	IDs      []string `json:"ids,omitempty"`
	User     string   `json:"user,omitempty"`
	Finished bool     `json:"finished,omitempty"` // -x
	Subjobs  bool     `json:"subjobs,omitempty"`  // -t
	Full     bool     `json:"full,omitempty"`     // -f: scripts, environment and history too
	// Since bounds how far back -x without ids reaches into the job
	// history (qstat --since): jobs that ended at or after it. Zero: the
	// controller's default (30 days).
	Since time.Time `json:"since,omitzero"`
	// Summary asks for Response.Summary (see AppendSummary) instead of Jobs.
	Summary bool `json:"summary,omitempty"`
}

// AlterSpec is what qalter or sharqctl job priority changes; nil fields stay.
type AlterSpec struct {
	ID       string `json:"id"`
	Priority *int   `json:"priority,omitempty"` // sharq's scale (sharqctl job priority)
	// PBSPriority is qalter -p, on PBS's scale, as SubmitSpec.PBSPriority.
	PBSPriority *int           `json:"pbs_priority,omitempty"`
	Walltime    *time.Duration `json:"walltime,omitempty"`
	Name        *string        `json:"name,omitempty"`
	Deps        *[]Dep         `json:"deps,omitempty"`
	NotBefore   *time.Time     `json:"not_before,omitempty"`
}

// Response answers one Request. Error is set when the request failed
// (partly or wholly: Errors lists per-id failures of multi-id requests).
type Response struct {
	V      int           `json:"v"`
	Error  *Error        `json:"error,omitempty"`
	Errors []Error       `json:"errors,omitempty"`
	JobID  string        `json:"job_id,omitempty"`
	Jobs   []Job         `json:"jobs,omitempty"`
	Shares []ShareStatus `json:"shares,omitempty"`
	Nodes  []NodeStatus  `json:"nodes,omitempty"`
	Text   string        `json:"text,omitempty"`
	// Usage and Timeline answer a usage report.
	Usage    []UsageRow   `json:"usage,omitempty"`
	Timeline []UsagePoint `json:"timeline,omitempty"`
	// Controllers answers OpControllers, the leader first.
	Controllers []ControllerStatus `json:"controllers,omitempty"`
	// Session answers OpSession.
	Session *SessionGrant `json:"session,omitempty"`
	// Summary holds one line per job for StatFilter.Summary. It travels
	// after the response line as Payload raw bytes (see WriteResponse):
	// JSON would escape every tab and newline of a 100,000-job listing.
	Summary []byte `json:"-"`
	Payload int    `json:"payload,omitempty"`
}

// Error codes; clients branch on them.
const (
	CodeBadRequest   = "bad_request"
	CodeUnknownJob   = "unknown_job"
	CodePermission   = "permission_denied"
	CodeInvalidState = "invalid_state"
	// CodeResourceLimit: a job no node or share could ever run (PBS's
	// PBSE_EXCQRESC, "Job violates queue and/or server resource limits").
	CodeResourceLimit = "resource_limit"
	CodeConfig        = "config_error"
	CodeInternal      = "internal"
	// CodeUserLimit: the request would take its user past a per-user
	// cap (max_queued_jobs_per_user, the bytes of unfinished jobs); it
	// may succeed once some of the user's jobs have finished.
	CodeUserLimit = "user_limit"
	// CodeNotLeader: the controller asked is a follower of an HA cluster;
	// Error.Leader is the leader's client address ("" while none leads),
	// where the client sends the same request again.
	CodeNotLeader = "not_leader"
	// CodeUnavailable: the controller is stopping (it could not write its
	// spool, or it lost leadership) and acknowledged nothing of the
	// request; a client of an HA cluster asks again, of the next leader.
	CodeUnavailable = "unavailable"
)

// Error is a request failure.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	ID      string `json:"id,omitempty"`
	// Leader is set with CodeNotLeader: the current leader's TCP client
	// address, "" when none is known.
	Leader string `json:"leader,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// ShareStatus is one row of qstat -Q.
type ShareStatus struct {
	Name        string `json:"name"`
	Partition   string `json:"partition"`
	Strategy    string `json:"strategy"`
	State       string `json:"state"` // ENABLED, DISABLED, REMOVED
	BorrowLimit int    `json:"borrow_limit"`
	Quota       int    `json:"quota"`
	InUse       int    `json:"in_use"`
	Borrowed    int    `json:"borrowed"`
	Lent        int    `json:"lent"`
	Pending     int    `json:"pending"`
	Running     int    `json:"running"`
	Preemptions int    `json:"preemptions"` // jobs of this share preempted, since the controller started
	// FairUsage is the share's borrowed GPU-hours, decayed with
	// [scheduler] usage_half_life: what fair share orders borrowers by.
	FairUsage float64 `json:"fair_usage_gpu_h"`
}

// NodeStatus is one node as the controller sees it.
type NodeStatus struct {
	Name      string     `json:"name"`
	Partition string     `json:"partition"`
	State     string     `json:"state"` // up, down, drained, unhealthy (Problems[0] says why)
	GPUs      int        `json:"gpus"`
	UsedGPUs  []int      `json:"used_gpus,omitempty"`
	Inventory *Inventory `json:"inventory,omitempty"`
	Problems  []string   `json:"problems,omitempty"` // e.g. NVML disagrees with the config
	Comment   string     `json:"comment,omitempty"`  // an admin's (pbsnodes -C)
	LastSeen  time.Time  `json:"last_seen,omitzero"`
	// UnhealthyGPUs are the node's fenced GPUs, a fault each (Problems
	// says the same in words).
	UnhealthyGPUs []GPUFault `json:"unhealthy_gpus,omitempty"`
}

// ControllerStatus is one sharqctld of the cluster (sharqctl show
// controllers): on etcd, every candidate of the election.
type ControllerStatus struct {
	Host   string `json:"host"`
	PID    int    `json:"pid"`
	Nodes  string `json:"nodes"` // the address node daemons dial
	Leader bool   `json:"leader"`
	// Epoch is the leader epoch (its election key's create revision; 0 for
	// a single controller on bbolt).
	Epoch int64 `json:"epoch"`
	// Since is when it started campaigning; LeaderSince when it won (the
	// leader only).
	Since       time.Time `json:"since"`
	LeaderSince time.Time `json:"leader_since,omitzero"`
}
