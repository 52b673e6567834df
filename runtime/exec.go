package runtime

import (
	"context"
	"errors"
	"io"
	"syscall"
)

// Execer runs more processes in a running job's container: the sessions
// of qsub -I and qexec. Implementation: Containerd.
type Execer interface {
	// Exec starts a process in the job's container with the job's own
	// identity and confinement (uid, gids, no capabilities, no new
	// privileges, its seccomp profile, cgroup, GPUs and namespaces) and
	// environment plus ExecSpec.Env. Unknown job: ErrNotFound; a job that
	// no longer runs: ErrNotRunning.
	Exec(ctx context.Context, jobID string, s ExecSpec) (Process, error)
}

// ErrNotRunning: Exec into a job whose container does not run.
var ErrNotRunning = errors.New("job container not running")

// ExecSpec is one process to run in a job's container.
type ExecSpec struct {
	Args []string // argv; Args[0] is looked up in the job's PATH
	Env  []string // added to (and overriding) the job's environment
	// TTY gives the process a terminal of Rows x Cols; Stderr is then
	// unused (a terminal has one stream).
	TTY        bool
	Rows, Cols uint16
	Stdin      io.Reader
	Stdout     io.Writer
	Stderr     io.Writer
}

// Process is a running Exec.
type Process interface {
	// Resize changes the terminal's size (TTY only).
	Resize(ctx context.Context, rows, cols uint16) error
	// CloseStdin ends the process's input (EOF), once Stdin is drained.
	CloseStdin(ctx context.Context) error
	// Signal sends sig to the process.
	Signal(ctx context.Context, sig syscall.Signal) error
	// Wait blocks until the process has exited and its output is copied,
	// removes it and returns its exit status: its code, or 128+N for a
	// death by signal N.
	Wait(ctx context.Context) (int, error)
}
