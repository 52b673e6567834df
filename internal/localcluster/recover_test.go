//go:build !unit

package localcluster

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRecoverLeftovers: what a killed make up leaves (its lock file naming
// a dead sharq-up and a daemon still running, sockets, secret, spool, node
// state, fake GPUs, a mount under the run directory) is found, reported
// one line each and removed; the logs and the munge key stay.
func TestRecoverLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (a mount under the run directory), as make test runs")
	}
	dir := t.TempDir()
	o := Options{Config: testConfig(t, dir, `session_listen = ""`), BinDir: t.TempDir(), RunDir: filepath.Join(dir, "run"),
		StateDir: filepath.Join(dir, "state"), Out: &bytes.Buffer{}}
	o.setDefaults()
	l, err := newLayout(o)
	if err != nil {
		t.Fatal(err)
	}

	// A daemon of the killed run, still running, and its dead parent.
	daemon := exec.Command("sleep", "600")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	t.Cleanup(func() { _ = daemon.Process.Kill() })
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mkfile := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mkfile(l.lock)
	lockText := "sharq-up " + itoa(gone.Process.Pid) + "\nsleep " + itoa(daemon.Process.Pid) + "\n"
	if err := os.WriteFile(l.lock, []byte(lockText), 0o644); err != nil {
		t.Fatal(err)
	}
	c := l.cfg.Cluster
	for _, p := range append([]string{c.Socket, c.SecretFile, filepath.Join(c.SpoolDir, "spool.db"),
		filepath.Join(l.nodeDir, "n1", "state"), filepath.Join(l.logDir, "sharqctld.log"),
		filepath.Join(l.state, "munge", "munge.key")}, l.devices...) {
		mkfile(p)
	}
	mnt := filepath.Join(l.run, "mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })

	u := &up{o: o, l: l, logged: map[string]bool{}}
	lock, stale, err := acquireLock(l.lock)
	if err != nil {
		t.Fatal(err)
	}
	u.lock = lock
	defer lock.release()
	found, err := u.recoverLeftovers(context.Background(), stale)
	if err != nil {
		t.Fatalf("recoverLeftovers: %v", err)
	}
	report := strings.Join(found, "\n")
	for _, want := range []string{
		"lock file " + l.lock + " of sharq-up pid " + itoa(gone.Process.Pid) + ", which is gone",
		"stopped sleep (pid " + itoa(daemon.Process.Pid) + "), left running by it",
		"unmounted 1 mount(s)",
		"removed the controller's socket " + c.Socket,
		"removed the node secret " + c.SecretFile,
		"removed the spool " + c.SpoolDir,
		"removed the nodes' state " + l.nodeDir,
		"removed fake GPUs " + compactDevices(l.devices),
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "containerd") {
		t.Errorf("report names a containerd the earlier run did not have:\n%s", report)
	}
	select {
	case err := <-exited:
		if ws, ok := daemon.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGTERM {
			t.Errorf("the stale daemon ended with %v, want SIGTERM", err)
		}
	default:
		t.Errorf("the stale daemon still runs")
	}
	for _, p := range append([]string{c.Socket, c.SecretFile, c.SpoolDir, l.nodeDir}, l.devices...) {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if left, _ := MountsUnder(l.run, l.state); len(left) > 0 {
		t.Errorf("mounts left: %v", left)
	}
	for _, p := range []string{filepath.Join(l.logDir, "sharqctld.log"), filepath.Join(l.state, "munge", "munge.key")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: logs and the munge key stay", p)
		}
	}

	// A second run finds nothing.
	if found, err := u.recoverLeftovers(context.Background(), nil); err != nil || len(found) > 0 {
		t.Errorf("second recoverLeftovers: %v, %q", err, found)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
