//go:build !unit

package localcluster

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAlive(t *testing.T) {
	self := pidEntry{name: "localcluster.test", pid: os.Getpid()}
	if !alive(self) {
		t.Errorf("alive(%v) = false for this process", self)
	}
	if other := (pidEntry{name: "sharqctld", pid: os.Getpid()}); alive(other) {
		t.Errorf("alive(%v) = true for a process of another name", other)
	}
	// A node daemon's entry is named for its node, and runs sharqd.
	if prog := (pidEntry{name: "sharqd-node1", pid: os.Getpid(), prog: "localcluster.test"}); !alive(prog) {
		t.Errorf("alive(%v) = false for this process, by its program", prog)
	}
}

func TestUpRefuses(t *testing.T) {
	dir := t.TempDir()
	config := testConfig(t, dir, "")
	opts := func(bin string) Options {
		return Options{Config: config, BinDir: bin, RunDir: filepath.Join(dir, "run"), StateDir: filepath.Join(dir, "state"), Out: io.Discard}
	}
	if err := Up(context.Background(), opts(fakeBin(t, "sharqd"))); !errors.Is(err, ErrMissingBinary) || !strings.Contains(err.Error(), "sharqd") {
		t.Errorf("Up without sharqd: %v, want ErrMissingBinary naming sharqd", err)
	}
	held, _, err := acquireLock(filepath.Join(dir, "run", "sharq-up.lock"))
	if err != nil {
		t.Fatal(err)
	}
	err = Up(context.Background(), opts(fakeBin(t, "")))
	held.release()
	if !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), "export SHARQ_SOCKET="+filepath.Join(dir, "run", "s.sock")) {
		t.Errorf("Up while another holds the lock: %v, want ErrAlreadyRunning with instructions", err)
	}
}
