package hostproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/runtime"
)

// Runtime runs jobs as host processes; see the package documentation.
type Runtime struct {
	node  string
	log   *slog.Logger
	cg    *cgroups // nil: no memory limits
	cgErr error    // why not

	mu     sync.Mutex
	jobs   map[string]*proc
	closed bool
}

// proc is one job run.
type proc struct {
	spec   runtime.Spec
	pid    int
	cgroup string // its memory cgroup's directory, or ""
	done   chan struct{}
	status int  // once done
	oom    bool // once done
	kill   *time.Timer
}

// Option configures New.
type Option func(*options)

type options struct {
	cgroupParent string
	log          *slog.Logger
}

// WithCgroupParent names the cgroup under which job cgroups are made
// (default "sharq-hostproc"); two Runtimes may share it.
func WithCgroupParent(name string) Option { return func(o *options) { o.cgroupParent = name } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// New returns a Runtime for node.
func New(node string, opts ...Option) *Runtime {
	o := options{cgroupParent: "sharq-hostproc", log: slog.Default()}
	for _, f := range opts {
		f(&o)
	}
	r := &Runtime{node: node, log: o.log, jobs: map[string]*proc{}}
	r.cg, r.cgErr = newCgroups(o.cgroupParent)
	return r
}

// MemoryLimits says whether Spec.Memory is applied; when not, Start
// refuses a Spec with Memory (runtime.ErrUnsupported).
func (r *Runtime) MemoryLimits() bool { return r.cg != nil }

// Start implements runtime.Runtime.
func (r *Runtime) Start(ctx context.Context, s runtime.Spec) error {
	if s.JobID == "" || len(s.Args) == 0 {
		return fmt.Errorf("start job %q: %w: no job id or no command", s.JobID, runtime.ErrUnsupported)
	}
	if euid := os.Geteuid(); euid != 0 && (int(s.UID) != euid || int(s.GID) != os.Getegid()) {
		return fmt.Errorf("start job %s: %w: running as %d:%d needs root", s.JobID, runtime.ErrUnsupported, s.UID, s.GID)
	}
	if s.Memory > 0 && r.cg == nil {
		return fmt.Errorf("start job %s: %w: a memory limit needs a writable memory cgroup (%v)", s.JobID, runtime.ErrUnsupported, r.cgErr)
	}
	p := &proc{spec: s, done: make(chan struct{})}
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return fmt.Errorf("start job %s: %w: closed", s.JobID, runtime.ErrUnavailable)
	case r.jobs[s.JobID] != nil:
		r.mu.Unlock()
		return fmt.Errorf("start job %s: %w", s.JobID, runtime.ErrExists)
	}
	r.jobs[s.JobID] = p // reserved: a second Start sees ErrExists
	r.mu.Unlock()
	if err := r.start(p); err != nil {
		r.mu.Lock()
		delete(r.jobs, s.JobID)
		r.mu.Unlock()
		return fmt.Errorf("start job %s: %w", s.JobID, err)
	}
	r.log.Info("job started", "job", s.JobID, "run", s.Run, "pid", p.pid)
	return nil
}

// gate holds a cgroup v1 job until it has been moved into its cgroup: it
// reads fd 3 (closed by the runtime once the move is done), closes it and
// becomes the job's program.
const gate = `read x <&3; exec 3<&-; exec "$@"`

func (r *Runtime) start(p *proc) error {
	s := p.spec
	files, err := runtime.OpenJobFiles(s)
	if err != nil {
		return err
	}
	defer files.Close()
	path := s.Args[0]
	if !strings.Contains(path, "/") {
		if path, err = exec.LookPath(path); err != nil {
			return err
		}
	}
	cmd := &exec.Cmd{Path: path, Args: s.Args, Env: s.Env, Dir: s.WorkDir, Stdout: files.Stdout, Stderr: files.Stderr}
	if cmd.Env == nil {
		cmd.Env = []string{} // exactly the job's environment, none of ours
	}
	if files.Stderr == nil {
		cmd.Stderr = files.Stdout
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		attr.Credential = &syscall.Credential{Uid: s.UID, Gid: s.GID, Groups: s.Groups}
	}
	cmd.SysProcAttr = attr
	var release *os.File // cgroup v1: the gate's pipe
	if s.Memory > 0 {
		name := fmt.Sprintf("%s-%d", runtime.ContainerID(r.node, s.JobID), s.Run)
		if p.cgroup, err = r.cg.create(name, s.Memory); err != nil {
			return err
		}
		if r.cg.v2 {
			fd, err := unix.Open(p.cgroup, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				remove(p.cgroup)
				return err
			}
			defer unix.Close(fd)
			attr.UseCgroupFD, attr.CgroupFD = true, fd
		} else {
			pr, pw, err := os.Pipe()
			if err != nil {
				remove(p.cgroup)
				return err
			}
			defer pr.Close()
			defer pw.Close()
			release = pw
			cmd.Path = "/bin/sh"
			cmd.Args = append([]string{"sh", "-c", gate, "sharq-gate", path}, s.Args[1:]...)
			cmd.ExtraFiles = []*os.File{pr}
		}
	}
	if err := cmd.Start(); err != nil {
		if p.cgroup != "" {
			remove(p.cgroup)
		}
		return err
	}
	r.mu.Lock()
	p.pid = cmd.Process.Pid
	r.mu.Unlock()
	if release != nil {
		if err := enter(p.cgroup, p.pid); err != nil {
			_ = unix.Kill(-p.pid, unix.SIGKILL)
			_ = cmd.Wait()
			remove(p.cgroup)
			return fmt.Errorf("cgroup: %w", err)
		}
		release.Close() // the gate reads EOF: the job runs, inside its cgroup
	}
	go r.reap(p, cmd)
	return nil
}

// reap waits for the job's process, records how it ended and ends what it
// left behind in its process group and cgroup (as a container's init
// exiting ends the container).
func (r *Runtime) reap(p *proc, cmd *exec.Cmd) {
	_ = cmd.Wait()
	status := 0
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Signaled():
			status = 256 + int(ws.Signal())
		default:
			status = ws.ExitStatus()
		}
	}
	_ = unix.Kill(-p.pid, unix.SIGKILL)
	oom := false
	if p.cgroup != "" {
		kill(p.cgroup, unix.SIGKILL)
		n, err := r.cg.oomKills(p.cgroup)
		if err != nil {
			r.log.Warn("job oom count", "job", p.spec.JobID, "err", err)
		}
		oom = n > 0
	}
	r.mu.Lock()
	p.status, p.oom = status, oom
	if p.kill != nil {
		p.kill.Stop()
	}
	r.mu.Unlock()
	close(p.done)
	r.log.Info("job exited", "job", p.spec.JobID, "status", status, "oom", oom)
}

func (r *Runtime) get(jobID string) (*proc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.jobs[jobID]
	if p == nil || p.pid == 0 {
		return nil, fmt.Errorf("job %s: %w", jobID, runtime.ErrNotFound)
	}
	return p, nil
}

func exited(p *proc) bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// signal sends sig to the job's process group and cgroup, unless it has
// exited (its pid may be reused then).
func (r *Runtime) signal(p *proc, sig unix.Signal) {
	if exited(p) {
		return
	}
	_ = unix.Kill(-p.pid, sig)
	if p.cgroup != "" {
		kill(p.cgroup, sig)
	}
}

// Stop implements runtime.Runtime.
func (r *Runtime) Stop(ctx context.Context, jobID string, grace time.Duration) error {
	p, err := r.get(jobID)
	if err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	if exited(p) {
		return nil // it ended on its own: its status stays its own
	}
	r.signal(p, unix.SIGTERM) // before the KILL is armed: a zero grace still sends TERM first
	r.mu.Lock()
	if p.kill == nil {
		p.kill = time.AfterFunc(grace, func() { r.signal(p, unix.SIGKILL) })
	}
	r.mu.Unlock()
	r.log.Info("job stopping", "job", jobID, "grace", grace)
	return nil
}

// Signal implements runtime.Runtime.
func (r *Runtime) Signal(ctx context.Context, jobID string, sig syscall.Signal) error {
	p, err := r.get(jobID)
	if err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	r.signal(p, sig)
	r.log.Info("job signalled", "job", jobID, "signal", sig)
	return nil
}

// Wait implements runtime.Runtime.
func (r *Runtime) Wait(ctx context.Context, jobID string) (int, error) {
	p, err := r.get(jobID)
	if err != nil {
		return 0, fmt.Errorf("wait: %w", err)
	}
	select {
	case <-p.done:
		return p.status, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("wait job %s: %w", jobID, ctx.Err())
	}
}

// List implements runtime.Runtime.
func (r *Runtime) List(ctx context.Context) ([]runtime.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runtime.Task
	for _, p := range r.jobs {
		if p.pid == 0 {
			continue
		}
		t := runtime.Task{JobID: p.spec.JobID, Node: r.node, Run: p.spec.Run, Running: !exited(p)}
		if !t.Running {
			t.ExitStatus = p.status
		}
		out = append(out, t)
	}
	return out, nil
}

// OOMKilled implements runtime.Runtime: the oom_kill count of the job's
// memory cgroup (false for a job without a memory limit).
func (r *Runtime) OOMKilled(ctx context.Context, jobID string) (bool, error) {
	p, err := r.get(jobID)
	if err != nil {
		return false, fmt.Errorf("oom: %w", err)
	}
	if exited(p) || p.cgroup == "" {
		return p.oom, nil
	}
	n, err := r.cg.oomKills(p.cgroup)
	if err != nil {
		return false, fmt.Errorf("oom job %s: %w", jobID, err)
	}
	return n > 0, nil
}

// Remove implements runtime.Runtime.
func (r *Runtime) Remove(ctx context.Context, jobID string) error {
	p, err := r.get(jobID)
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if !exited(p) {
		return fmt.Errorf("remove job %s: %w", jobID, runtime.ErrRunning)
	}
	var rerr error
	if p.cgroup != "" {
		rerr = remove(p.cgroup)
	}
	r.mu.Lock()
	if r.jobs[jobID] == p {
		delete(r.jobs, jobID)
	}
	r.mu.Unlock()
	return rerr
}

// Health implements runtime.Runtime: host processes can always be
// started, until Close.
func (r *Runtime) Health(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("%w: closed", runtime.ErrUnavailable)
	}
	return nil
}

// Close kills the jobs still running, waits for them and removes their
// cgroups.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	var ps []*proc
	for _, p := range r.jobs {
		if p.pid != 0 {
			ps = append(ps, p)
		}
	}
	r.jobs = map[string]*proc{}
	r.mu.Unlock()
	var errs []error
	for _, p := range ps {
		r.signal(p, unix.SIGKILL)
		<-p.done
		if p.cgroup != "" {
			errs = append(errs, remove(p.cgroup))
		}
	}
	return errors.Join(errs...)
}

var _ runtime.Runtime = (*Runtime)(nil)
