package ctrd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// killShims kills the shims of the containerd that listened on socket,
// and their children (a task's processes, where a shim still has any). A
// shim outlives its containerd by design (a restarted containerd finds its
// tasks again), so once the daemon is gone for good nothing else ends
// them: a task created while Sweep was listing, or one left by a daemon
// that died, kept its shim running, reparented to init, for ever. It
// returns how many shims it killed.
func killShims(socket string) (int, error) {
	procs, err := readProcs()
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, p := range procs {
		if !isShimOf(p.argv, socket) {
			continue
		}
		for _, c := range procs {
			if c.ppid == p.pid {
				if err := syscall.Kill(c.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
					errs = append(errs, fmt.Errorf("shim %d child %d: %w", p.pid, c.pid, err))
				}
			}
		}
		if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("shim %d: %w", p.pid, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// isShimOf says whether argv is a containerd shim's whose -address is
// socket.
func isShimOf(argv []string, socket string) bool {
	if len(argv) == 0 || !strings.HasPrefix(filepath.Base(argv[0]), "containerd-shim") {
		return false
	}
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "-address" && argv[i+1] == socket {
			return true
		}
	}
	return false
}

// proc is a process as /proc shows it.
type proc struct {
	pid, ppid int
	argv      []string
}

// readProcs lists the processes (those that end while it reads are left
// out).
func readProcs() ([]proc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("processes: %w", err)
	}
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err1 := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		cmdline, err2 := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err1 != nil || err2 != nil {
			continue
		}
		_, ppid, ok := parseStat(stat)
		if !ok {
			continue
		}
		out = append(out, proc{pid: pid, ppid: ppid, argv: strings.Split(string(bytes.TrimRight(cmdline, "\x00")), "\x00")})
	}
	return out, nil
}

// parseStat reads the state and the parent pid from /proc/PID/stat: "pid
// (comm) state ppid ...", where comm may hold spaces and parentheses.
func parseStat(stat []byte) (state string, ppid int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return f[0], ppid, err == nil
}
