package runtime

import (
	"context"
	"errors"
	"syscall"
	"time"
)

// Runtime runs job containers on one node. Implementations: Containerd
// (containerd.go), and for tests without containerd package hostproc (jobs
// as plain host processes); both pass the conformance suite in runtimetest,
// which any other implementation must pass too.
type Runtime interface {
	// Start creates and starts the container for one run of a job. Starting
	// a run that already exists returns an error wrapping ErrExists and
	// changes nothing (a job is never started twice).
	Start(ctx context.Context, spec Spec) error
	// Stop sends SIGTERM to the job's processes, and SIGKILL once grace has
	// passed if they are still there. It returns once the signal(s) are
	// scheduled; the exit arrives through Wait. Unknown job: ErrNotFound.
	Stop(ctx context.Context, jobID string, grace time.Duration) error
	// Signal sends sig to every process of the job's container (qsig).
	// A job that already exited gets nothing and Signal returns nil.
	// Unknown job: ErrNotFound.
	Signal(ctx context.Context, jobID string, sig syscall.Signal) error
	// Wait blocks until the job's container has exited (or ctx ends) and
	// returns its PBS exit status: the script's code, or 256+signal.
	Wait(ctx context.Context, jobID string) (int, error)
	// List returns every job container of this node that exists (running or
	// exited and not yet removed), so a restarted node daemon re-adopts them.
	List(ctx context.Context) ([]Task, error)
	// OOMKilled tells whether the kernel killed a process of the job's
	// container for exceeding its memory limit; valid until Remove.
	OOMKilled(ctx context.Context, jobID string) (bool, error)
	// Remove deletes an exited job's container and its resources.
	Remove(ctx context.Context, jobID string) error
	// Health reports whether the runtime can run containers now: nil, or
	// why not (the container daemon does not answer).
	Health(ctx context.Context) error
	Close() error
}

// Spec is one run of a job on this node.
type Spec struct {
	JobID   string // "12.lab"; the container name is derived from it
	Node    string // this node's name: containers of several node daemons may share one containerd
	Run     int    // which run (the job's preemption count): SHARQ_RESTART_COUNT
	Image   string // image reference, present in containerd
	UID     uint32
	GID     uint32
	Groups  []uint32
	Args    []string // argv inside the container
	Env     []string // KEY=VALUE, complete (PBS_*, CUDA_VISIBLE_DEVICES, ...)
	WorkDir string   // cwd inside the container; bind-mounted at the same path
	Stdout  string   // host path, created owned by UID:GID
	Stderr  string   // host path; equal to Stdout to join them
	Mounts  []Mount  // more bind mounts (checkpoint dir, node file)
	Devices []string // host device nodes the job may open (its GPUs and the shared control devices)
	CPUs    int      // CPU limit; 0 = none
	Memory  int64    // bytes; 0 = none
	Pids    int64    // most processes and threads at once; 0 = no limit
	UserNS  bool     // the job may create user (and other) namespaces
	Network string   // NetworkHost ("" too) or NetworkNone
	// Umask is the job's processes' umask; its output files, when made,
	// get mode 0666 less it. nil is DefaultUmask.
	Umask *uint32
}

// DefaultUmask is a Spec's umask when it gives none: PBS's default, so a
// job's output files are 0600.
const DefaultUmask = 0o077

// FileUmask is s's umask: Umask, or DefaultUmask when it is nil.
func (s Spec) FileUmask() uint32 { return s.umask() }

// umask is s's umask.
func (s Spec) umask() uint32 {
	if s.Umask == nil {
		return DefaultUmask
	}
	return *s.Umask & 0o777
}

// Mount is a bind mount.
type Mount struct {
	Source, Dest string
	ReadOnly     bool
}

// Task is a job container found on the node.
type Task struct {
	JobID      string
	Node       string
	Run        int
	Running    bool
	ExitStatus int // when !Running
}

var (
	ErrExists   = errors.New("job container already exists")
	ErrNotFound = errors.New("job container not found")
	// ErrUnavailable wraps Health's answer while the container daemon is
	// unreachable.
	ErrUnavailable = errors.New("container runtime unavailable")
	// ErrRunning: Remove of a job whose container still runs.
	ErrRunning = errors.New("job container still running")
	// ErrUnsupported: the Spec asks for something this runtime cannot
	// give (e.g. a memory limit without a memory cgroup); it is refused,
	// never silently dropped.
	ErrUnsupported = errors.New("not supported by this runtime")
)

// Networks of Spec.Network.
const (
	NetworkHost = "host" // the node's network namespace (default, "")
	NetworkNone = "none" // a new network namespace: loopback only
)
