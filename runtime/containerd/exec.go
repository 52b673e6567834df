package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sharq-hpc/sharq/runtime"
)

var _ runtime.Execer = (*Containerd)(nil)

// Exec starts a process in the job's container; see Execer.
func (c *Containerd) Exec(ctx context.Context, jobID string, s runtime.ExecSpec) (runtime.Process, error) {
	ctx = c.nsctx(ctx)
	if len(s.Args) == 0 {
		return nil, fmt.Errorf("exec in job %s: %w: no command", jobID, ErrBadSpec)
	}
	ctr, err := c.load(ctx, jobID)
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	spec, err := ctr.Spec(ctx)
	if err != nil {
		return nil, fmt.Errorf("exec in job %s: %w", jobID, err)
	}
	task, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("exec in job %s: %w", jobID, runtime.ErrNotRunning)
	}
	if err != nil {
		return nil, fmt.Errorf("exec in job %s: %w", jobID, err)
	}
	if st, err := task.Status(ctx); err != nil {
		return nil, fmt.Errorf("exec in job %s: %w", jobID, err)
	} else if st.Status != client.Running {
		return nil, fmt.Errorf("exec in job %s: %w (%s)", jobID, runtime.ErrNotRunning, st.Status)
	}
	if spec.Process == nil {
		return nil, fmt.Errorf("exec in job %s: the container has no process spec", jobID)
	}
	// The job's own process spec: user, capabilities, no_new_privs,
	// rlimits, AppArmor/SELinux labels and cwd stay; runc applies the
	// container's seccomp profile and joins its namespaces and cgroup.
	p := *spec.Process
	p.Args = slices.Clone(s.Args)
	p.Env = mergeEnv(p.Env, s.Env)
	p.Terminal = s.TTY
	p.ConsoleSize = nil
	if s.TTY && s.Rows > 0 && s.Cols > 0 {
		p.ConsoleSize = &specs.Box{Height: uint(s.Rows), Width: uint(s.Cols)}
	}
	opts := []cio.Opt{cio.WithStreams(s.Stdin, s.Stdout, s.Stderr)}
	if s.TTY {
		opts = append(opts, cio.WithTerminal)
	}
	id, err := execID()
	if err != nil {
		return nil, fmt.Errorf("exec in job %s: %w", jobID, err)
	}
	proc, err := task.Exec(ctx, id, &p, cio.NewCreator(opts...))
	if err != nil {
		return nil, fmt.Errorf("exec in job %s: %w", jobID, err)
	}
	// Wait before Start: an exit between the two is not missed.
	wctx, cancel := context.WithCancel(c.nsctx(context.Background()))
	exited, err := proc.Wait(wctx)
	if err != nil {
		cancel()
		proc.Delete(ctx, client.WithProcessKill)
		return nil, fmt.Errorf("exec in job %s: %w", jobID, err)
	}
	if err := proc.Start(ctx); err != nil {
		cancel()
		proc.Delete(ctx, client.WithProcessKill)
		return nil, fmt.Errorf("exec in job %s: start: %w", jobID, err)
	}
	if s.TTY && s.Rows > 0 && s.Cols > 0 {
		proc.Resize(ctx, uint32(s.Cols), uint32(s.Rows))
	}
	return &execProc{c: c, job: jobID, proc: proc, exited: exited, cancel: cancel}, nil
}

// execID names one exec process (containerd allows 76 characters).
func execID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "sharq-session-" + hex.EncodeToString(b[:]), nil
}

// mergeEnv is env with the KEY=VALUE entries of more replacing or added.
func mergeEnv(env, more []string) []string {
	out := slices.Clone(env)
	for _, kv := range more {
		k := kv
		for i := range len(kv) {
			if kv[i] == '=' {
				k = kv[:i+1]
				break
			}
		}
		out = slices.DeleteFunc(out, func(e string) bool { return len(e) >= len(k) && e[:len(k)] == k })
		out = append(out, kv)
	}
	return out
}

type execProc struct {
	c      *Containerd
	job    string
	proc   client.Process
	exited <-chan client.ExitStatus
	cancel context.CancelFunc
}

func (e *execProc) Resize(ctx context.Context, rows, cols uint16) error {
	if err := e.proc.Resize(e.c.nsctx(ctx), uint32(cols), uint32(rows)); err != nil {
		return fmt.Errorf("job %s: resize: %w", e.job, err)
	}
	return nil
}

func (e *execProc) CloseStdin(ctx context.Context) error {
	if err := e.proc.CloseIO(e.c.nsctx(ctx), client.WithStdinCloser); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("job %s: close stdin: %w", e.job, err)
	}
	return nil
}

func (e *execProc) Signal(ctx context.Context, sig syscall.Signal) error {
	if err := e.proc.Kill(e.c.nsctx(ctx), sig); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("job %s: signal %v: %w", e.job, sig, err)
	}
	return nil
}

// ioDrain bounds the wait for a process's output after its exit (a
// background child may hold the terminal open).
const ioDrain = 2 * time.Second

func (e *execProc) Wait(ctx context.Context) (int, error) {
	defer e.cancel()
	var status uint32
	select {
	case <-ctx.Done():
		return -1, fmt.Errorf("job %s: wait for session: %w", e.job, ctx.Err())
	case es := <-e.exited:
		var err error
		if status, _, err = es.Result(); err != nil {
			return -1, fmt.Errorf("job %s: session exit: %w", e.job, err)
		}
	}
	done := make(chan struct{})
	go func() { e.proc.IO().Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(ioDrain):
		e.proc.IO().Cancel()
	}
	dctx, cancel := context.WithTimeout(e.c.nsctx(context.WithoutCancel(ctx)), 10*time.Second)
	defer cancel()
	if _, err := e.proc.Delete(dctx); err != nil && !errdefs.IsNotFound(err) {
		e.c.log.Warn("delete session process", "job", e.job, "err", err)
	}
	e.proc.IO().Close()
	return int(status), nil
}
