package munged

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Daemon is a running munged.
type Daemon struct {
	Dir    string // holds run/ (the socket) and lib/ (pid, seed, log)
	Socket string
	Key    string
	cmd    *exec.Cmd
	done   chan error
}

// NewKey writes a fresh random key to path (mode 0600), as
// `mungekey --create` would.
func NewKey(path string) error {
	key := make([]byte, 128)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("munge key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("munge key: %w", err)
	}
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return fmt.Errorf("munge key: %w", err)
	}
	return nil
}

// Start runs munged with key (a file NewKey wrote) and its other files in
// dir, which it creates. munged insists that every directory above its
// socket is searchable by all (so do the clients of other users) and that
// its key and state are private: dir is made 0755 and every directory
// above it gets search permission for all (only that: t.TempDir's are
// 0700). env is added to munged's environment. It returns once the socket
// exists.
func Start(ctx context.Context, dir, key string, env ...string) (*Daemon, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("munged: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("munged: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("munged: %w", err)
	}
	for d := filepath.Dir(dir); d != "/"; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("munged: %w", err)
		}
		if fi.Mode().Perm()&0o011 != 0o011 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o011); err != nil {
				return nil, fmt.Errorf("munged: %w", err)
			}
		}
	}
	run, lib := filepath.Join(dir, "run"), filepath.Join(dir, "lib")
	if err := os.MkdirAll(run, 0o755); err != nil {
		return nil, fmt.Errorf("munged: %w", err)
	}
	if err := os.MkdirAll(lib, 0o700); err != nil {
		return nil, fmt.Errorf("munged: %w", err)
	}
	d := &Daemon{Dir: dir, Socket: filepath.Join(run, "munge.socket"), Key: key, done: make(chan error, 1)}
	d.cmd = exec.Command("munged", "--foreground", "--force",
		"--socket="+d.Socket, "--key-file="+key,
		"--pid-file="+filepath.Join(lib, "munged.pid"),
		"--seed-file="+filepath.Join(lib, "munged.seed"),
		"--log-file="+filepath.Join(lib, "munged.log"),
		"--num-threads=4")
	d.cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	d.cmd.Stdout, d.cmd.Stderr = &out, &out
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("munged: %w (install Debian's munge: contrib/local/install-deps.sh)", err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(d.Socket); err == nil {
			return d, nil
		}
		select {
		case err := <-d.done:
			d.done <- err
			return nil, fmt.Errorf("munged exited: %v: %s%s", err, out.String(), d.Log())
		case <-deadline.C:
			d.Stop()
			return nil, errors.New("munged: no socket after 10s: " + d.Log())
		case <-ctx.Done():
			d.Stop()
			return nil, fmt.Errorf("munged: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Log is munged's log so far.
func (d *Daemon) Log() string {
	b, _ := os.ReadFile(filepath.Join(d.Dir, "lib", "munged.log"))
	return string(b)
}

// Stop ends munged (SIGTERM, then SIGKILL after 5s) and waits for it. A
// second Stop does nothing.
func (d *Daemon) Stop() {
	if d.cmd.Process == nil {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
	case <-time.After(5 * time.Second):
		_ = d.cmd.Process.Kill()
		d.done <- <-d.done
	}
}
