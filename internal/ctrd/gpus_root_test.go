//go:build !unit

package ctrd

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMakeFakeGPUs(t *testing.T) {
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "dev", "gpu0"), filepath.Join(dir, "dev", "gpu1"), filepath.Join(dir, "dev", "gpu2")}
	if err := os.MkdirAll(filepath.Dir(paths[1]), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths[1], []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MakeFakeGPUs(paths, false); err == nil {
		t.Fatal("MakeFakeGPUs without replace over an existing file succeeded")
	}
	if err := MakeFakeGPUs(paths, true); err != nil { // gpu0 (made above) and the stale gpu1 replaced
		t.Fatal(err)
	}
	major, err := FakeGPUMajor()
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode()&os.ModeCharDevice == 0 || fi.Mode().Perm() != 0o666 ||
			unix.Major(st.Rdev) != major || unix.Minor(st.Rdev) != uint32(i) {
			t.Errorf("%s: mode %v rdev %d:%d, want a 0666 character device %d:%d", p, fi.Mode(),
				unix.Major(st.Rdev), unix.Minor(st.Rdev), major, i)
		}
	}
	// Opening one reaches the kernel, which finds no driver.
	if _, err := os.Open(paths[0]); !errors.Is(err, unix.ENXIO) {
		t.Errorf("open %s: %v, want ENXIO", paths[0], err)
	}
}
