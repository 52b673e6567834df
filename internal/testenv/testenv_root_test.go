//go:build !unit

package testenv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

func TestContainerdStartStop(t *testing.T) {
	start := time.Now()
	d, err := StartContainerd("")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("containerd ready in %v", time.Since(start))
	if !strings.HasPrefix(d.Socket, "/tmp/sharq-ctr-") {
		t.Errorf("socket %s not under /tmp/sharq-ctr-", d.Socket)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := Namespace()
	ref, err := BusyboxImage(ctx, d.Socket, ns)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := BusyboxImage(ctx, d.Socket, ns); err != nil || again != ref {
		t.Errorf("second BusyboxImage = %q, %v", again, err)
	}
	// A job still running when the daemon stops is killed and cleaned up.
	rt, err := containerd.NewContainerd(ctx, d.Socket, ns, containerd.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := rt.Start(ctx, runtime.Spec{JobID: "1.t", Image: ref, Args: []string{"sleep", "1000"},
		Stdout: filepath.Join(dir, "out"), Stderr: filepath.Join(dir, "out")}); err != nil {
		t.Fatal(err)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := os.Stat(d.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("daemon directory left: %v", err)
	}
	for _, p := range []string{"/sys/fs/cgroup/memory/" + ns, "/sys/fs/cgroup/" + ns, "/run/containerd/runc/" + ns} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left: %v", p, err)
		}
	}
}

func TestContainerdHelper(t *testing.T) {
	socket := Containerd(t)
	if _, err := os.Stat(socket); err != nil {
		t.Fatal(err)
	}
}

func TestMakeFakeGPUs(t *testing.T) {
	dir := t.TempDir()
	paths, err := MakeFakeGPUs(dir, 8)
	if err != nil {
		t.Fatal(err)
	}
	major, err := FakeGPUMajor()
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 8 {
		t.Fatalf("%d paths", len(paths))
	}
	for i, p := range paths {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		if p != filepath.Join(dir, "nvidia"+string(rune('0'+i))) || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Mode&0o777 != 0o666 ||
			unix.Major(st.Rdev) != major || unix.Minor(st.Rdev) != uint32(i) {
			t.Errorf("%s: mode %o rdev %d:%d, want char 666 %d:%d", p, st.Mode, unix.Major(st.Rdev), unix.Minor(st.Rdev), major, i)
		}
		// No driver has this major: an allowed open fails with ENXIO.
		if _, err := os.Open(p); !errors.Is(err, unix.ENXIO) {
			t.Errorf("open %s: %v, want ENXIO", p, err)
		}
	}
	if _, err := MakeFakeGPUs(dir, 1); err == nil {
		t.Error("MakeFakeGPUs over existing nodes succeeded")
	}
}
