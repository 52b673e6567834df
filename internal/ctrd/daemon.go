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

	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
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
	c.cmd = exec.Command(bin, "--config", config)
	c.cmd.Stdout = logf
	c.cmd.Stderr = logf
	// Its own process group: a ^C in the caller's terminal reaches the
	// caller, which then stops the daemon in order.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.done)
	}()
	if err := c.waitReady(ctx, timeout); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("start containerd in %s: %w\n%s", dir, err, tail(c.Log, 20))
	}
	return c, nil
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
// the daemon with SIGTERM (SIGKILL after 10 s), unmounts what is left
// under Dir and removes Dir. It is safe to call more than once.
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
