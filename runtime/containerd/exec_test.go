//go:build !unit

package containerd_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/runtime"
)

// lockedBuf is an output buffer written by containerd's copy goroutine.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestExecKeepsConfinement: a process run in a job's container has the
// job's uid, groups, no capabilities, no_new_privs, seccomp and cgroup,
// and its exit status; with a terminal it gets its size.
func TestExecKeepsConfinement(t *testing.T) {
	rt := newRuntime(t, "node-exec")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	s := userSpec("node-exec", dir, "exec", "sleep 60")
	s.Groups = []uint32{1000, 44}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Start(ctx, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rt.Stop(context.Background(), s.JobID, 0)
		rt.Wait(context.Background(), s.JobID)
		rt.Remove(context.Background(), s.JobID)
	})

	for _, tc := range []struct {
		name   string
		tty    bool
		script string
		want   []string
		status int
	}{
		{"pipes", false, `id -u; id -G; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; cat /proc/self/cgroup; read x; echo "got $x"; exit 7`,
			[]string{"1000\n", "1000 44", "CapEff:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2", "got hello"}, 7},
		{"tty", true, `stty size; [ -t 0 ] && echo tty; read x; echo "got $x"; kill -TERM $$`,
			[]string{"33 101", "tty", "got hello"}, 128 + 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut lockedBuf
			var in io.Reader = strings.NewReader("hello\n")
			if tc.tty {
				// With a terminal, the end of stdin hangs the terminal
				// up (containerd's shim shuts its console down), which
				// can beat the line to the shell's read: keep stdin open
				// until the process has exited.
				pr, pw := io.Pipe()
				go pw.Write([]byte("hello\n"))
				defer pw.Close()
				in = pr
			}
			p, err := rt.Exec(ctx, s.JobID, runtime.ExecSpec{
				Args: []string{"/bin/sh", "-c", tc.script}, Env: []string{"TERM=dumb"},
				TTY: tc.tty, Rows: 33, Cols: 101, Stdin: in, Stdout: &out, Stderr: &errOut,
			})
			if err != nil {
				t.Fatal(err)
			}
			status, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if status != tc.status {
				t.Errorf("status %d, want %d; out %q err %q", status, tc.status, out.String(), errOut.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s\nstderr: %s", w, out.String(), errOut.String())
				}
			}
		})
	}
	if _, err := rt.Exec(ctx, "nosuch.e2e", runtime.ExecSpec{Args: []string{"/bin/true"}}); err == nil {
		t.Fatal("exec into an unknown job succeeded")
	}
}
