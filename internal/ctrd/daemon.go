package ctrd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Daemon is a private containerd whose files all live in Dir, which Stop
// removes.
type Daemon struct {
	Dir    string // holds root/, state/, opt/, config.toml, containerd.log, the socket
	Socket string // gRPC address (a Unix socket path)
	Log    string // the daemon's log file

	bin, config string // the binary and its config file
	cmd         *exec.Cmd
	done        chan struct{}
	waitErr     error
	stopOnce    sync.Once
	stopErr     error
}

// Start starts a containerd whose files all live in dir (socket dir/c.sock,
// log dir/containerd.log); an empty dir makes a new /tmp/sharq-ctr-*
// directory (short, for the socket path). disable names more plugins to
// leave out. It returns once the daemon answers a Version call, and fails
// when that takes longer than timeout or ctx ends. Stop it with Stop.
func Start(ctx context.Context, dir string, timeout time.Duration, disable ...string) (*Daemon, error) {
	if dir == "" {
		d, err := os.MkdirTemp("/tmp", "sharq-ctr-")
		if err != nil {
			return nil, fmt.Errorf("start containerd: %w", err)
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	c := &Daemon{Dir: dir, Socket: filepath.Join(dir, "c.sock"), Log: filepath.Join(dir, "containerd.log"), done: make(chan struct{})}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	config, err := Config{Dir: dir, Socket: c.Socket, Disable: disable}.Write()
	if err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	logf, err := os.Create(c.Log)
	if err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	defer logf.Close()
	c.bin, c.config = bin, config
	if err := c.spawn(logf); err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	if err := c.waitReady(ctx, timeout); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("start containerd in %s: %w\n%s", dir, err, tail(c.Log, 20))
	}
	return c, nil
}

// spawn starts the daemon process, logging to logf.
func (c *Daemon) spawn(logf *os.File) error {
	c.cmd = exec.Command(c.bin, "--config", c.config)
	c.cmd.Stdout = logf
	c.cmd.Stderr = logf
	// Its own process group: a ^C in the caller's terminal reaches the
	// caller, which then stops the daemon in order.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		return err
	}
	cmd, done := c.cmd, c.done
	go func() {
		c.waitErr = cmd.Wait()
		close(done)
	}()
	return nil
}

// Kill ends the daemon process with SIGKILL and waits for it, leaving its
// containers' shims running and its files in place, as a crash would:
// Restart brings it back over them.
func (c *Daemon) Kill() error {
	select {
	case <-c.done:
		return nil
	default:
	}
	if err := c.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("kill containerd: %w", err)
	}
	<-c.done
	return nil
}

// Restart starts the daemon again in the same directory, after Kill, and
// waits until it answers (as Start does).
func (c *Daemon) Restart(ctx context.Context, timeout time.Duration) error {
	select {
	case <-c.done:
	default:
		return errors.New("restart containerd: it still runs")
	}
	if _, err := (Config{Dir: c.Dir, Socket: c.Socket}).Write(); err != nil {
		return fmt.Errorf("restart containerd: %w", err)
	}
	logf, err := os.OpenFile(c.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("restart containerd: %w", err)
	}
	defer logf.Close()
	c.done = make(chan struct{})
	if err := c.spawn(logf); err != nil {
		return fmt.Errorf("restart containerd: %w", err)
	}
	if err := c.waitReady(ctx, timeout); err != nil {
		return fmt.Errorf("restart containerd in %s: %w\n%s", c.Dir, err, tail(c.Log, 20))
	}
	return nil
}

func (c *Daemon) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-c.done:
			return fmt.Errorf("containerd exited: %v", c.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if _, err := os.Stat(c.Socket); err == nil {
			err = Ping(ctx, c.Socket)
			if err == nil {
				return nil
			}
			if time.Now().After(deadline) {
				return err
			}
		} else if time.Now().After(deadline) {
			return fmt.Errorf("no socket after %v", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills and deletes every task and container the daemon holds (Sweep:
// every namespace, so no shim, cgroup or mount outlives the daemon), stops
// the daemon with SIGTERM (SIGKILL after 10 s), kills the shims still
// left (killShims: a task created during the sweep, or the daemon had died
// before), unmounts what is left under Dir and removes Dir. It is safe to
// call more than once.
func (c *Daemon) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		select {
		case <-c.done:
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := Sweep(ctx, c.Socket)
			errs = append(errs, err)
			cancel()
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-c.done:
			case <-time.After(10 * time.Second):
				_ = c.cmd.Process.Kill()
				<-c.done
			}
		}
		if _, err := killShims(c.Socket); err != nil {
			errs = append(errs, err)
		}
		if err := UnmountUnder(c.Dir); err != nil {
			errs = append(errs, err)
		} else if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, err)
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// tail returns the last n lines of a file ("" when it cannot be read).
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
