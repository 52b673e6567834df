package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrAlreadyRunning means another Up holds the lock: a local cluster is up.
var ErrAlreadyRunning = errors.New("a local sharq cluster is already up")

// instanceLock is the lock file: an exclusive flock held for as long as the
// cluster is up (the kernel drops it when the process dies, however it
// dies), and the pids of the processes Up started, one "name pid program"
// a line (program, the binary's file name, only where it differs from
// name: sharqd-node1 runs sharqd), so that the next Up can stop them if
// this one was killed.
type instanceLock struct {
	f    *os.File
	pids []pidEntry
}

type pidEntry struct {
	name string
	pid  int
	prog string // the binary's file name, "" when it is name
}

// acquireLock takes the lock at path. A lock held by a live Up gives an
// error wrapping ErrAlreadyRunning that names its pid; stale entries (a
// previous Up that was killed) are returned for cleanup.
func acquireLock(path string) (*instanceLock, []pidEntry, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		entries := readPids(f)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			for _, e := range entries {
				if e.name == "sharq-up" {
					return nil, nil, fmt.Errorf("%w (sharq-up pid %d holds %s)", ErrAlreadyRunning, e.pid, path)
				}
			}
			return nil, nil, fmt.Errorf("%w (%s is locked)", ErrAlreadyRunning, path)
		}
		return nil, nil, fmt.Errorf("lock %s: %w", path, err)
	}
	stale := readPids(f)
	l := &instanceLock{f: f}
	if err := l.add(pidEntry{"sharq-up", os.Getpid(), ""}); err != nil {
		l.release()
		return nil, nil, err
	}
	return l, stale, nil
}

func readPids(f *os.File) []pidEntry {
	if _, err := f.Seek(0, 0); err != nil {
		return nil
	}
	var out []pidEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || len(f) > 3 {
			continue
		}
		if pid, err := strconv.Atoi(f[1]); err == nil && pid > 1 {
			e := pidEntry{name: f[0], pid: pid}
			if len(f) == 3 {
				e.prog = f[2]
			}
			out = append(out, e)
		}
	}
	return out
}

// add records a started process and rewrites the file.
func (l *instanceLock) add(e pidEntry) error {
	if e.prog == e.name {
		e.prog = ""
	}
	l.pids = append(l.pids, e)
	var b strings.Builder
	for _, e := range l.pids {
		fmt.Fprintf(&b, "%s %d", e.name, e.pid)
		if e.prog != "" {
			fmt.Fprintf(&b, " %s", e.prog)
		}
		b.WriteByte('\n')
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	if _, err := l.f.WriteAt([]byte(b.String()), 0); err != nil {
		return fmt.Errorf("lock file: %w", err)
	}
	return nil
}

// release removes the lock file and drops the lock.
func (l *instanceLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = os.Remove(l.f.Name())
	_ = l.f.Close()
	l.f = nil
}

// alive reports whether pid still runs the entry's program (its /proc
// comm, which the kernel cuts to 15 bytes): a pid reused by another
// program is left alone.
func alive(e pidEntry) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", e.pid))
	if err != nil {
		return false
	}
	name := e.name
	if e.prog != "" {
		name = e.prog
	}
	if len(name) > 15 {
		name = name[:15]
	}
	return strings.TrimSpace(string(b)) == name
}

// stopStale stops the processes a killed Up left running: SIGTERM, then
// SIGKILL after grace. It returns the names of those it found.
func stopStale(entries []pidEntry, grace time.Duration) []string {
	var found []string
	for _, e := range entries {
		if e.name == "sharq-up" || !alive(e) {
			continue
		}
		found = append(found, fmt.Sprintf("%s (pid %d)", e.name, e.pid))
		_ = syscall.Kill(e.pid, syscall.SIGTERM)
		deadline := time.Now().Add(grace)
		for alive(e) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(e) {
			_ = syscall.Kill(e.pid, syscall.SIGKILL)
		}
	}
	return found
}
