package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrExited means a process Up started ended on its own.
var ErrExited = errors.New("exited")

// proc is one child process: containerd, sharqctld or a sharqd.
type proc struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's result, once done is closed
}

// startProcess starts bin with its output in its own log file, in its own
// process group (a ^C in make up's terminal reaches only sharq-up, which
// then stops the children in order) and with SIGTERM as its parent-death
// signal (if sharq-up is killed, the daemons stop; the next make up cleans
// up the rest).
func (u *up) startProcess(name, bin string, args ...string) (*proc, error) {
	logPath := u.l.log(name)
	// The previous run's log stays beside it (NAME.log.1): after a run
	// that was killed, it is the one that tells what happened. (A process
	// started twice in one run, containerd after a killed one, appends.)
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if !u.logged[name] {
		_ = os.Rename(logPath, logPath+".1")
		flags |= os.O_TRUNC
		u.logged[name] = true
	}
	logf, err := os.OpenFile(logPath, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "# sharq-up %s: %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "LANG=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	u.procs = append(u.procs, p)
	if err := u.lock.add(pidEntry{name, cmd.Process.Pid, filepath.Base(bin)}); err != nil {
		return p, err
	}
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitError describes the process's end with the tail of its log.
func (p *proc) exitError() error {
	return fmt.Errorf("%s %w (%v); last lines of %s:\n%s", p.name, ErrExited, p.err, p.log, tail(p.log, 15))
}

// stop sends SIGTERM and waits for the process, sending SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitFor polls ready until it succeeds, p exits, ctx ends or the start-up
// timeout passes.
func (u *up) waitFor(ctx context.Context, p *proc, ready func(context.Context) error) error {
	deadline := time.Now().Add(u.o.Timeout)
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		if p.exited() {
			return p.exitError()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %w; last lines of %s:\n%s", p.name, u.o.Timeout, err, p.log, tail(p.log, 15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tail returns the last n lines of a file, indented.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
