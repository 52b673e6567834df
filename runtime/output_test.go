//go:build !unit

package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func owner(t *testing.T, path string) (uint32, uint32, uint32) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Uid, st.Gid, st.Mode & 0o7777
}

// prepareOutput opens path as the user and closes it.
func prepareOutput(path string, uid, gid uint32, groups []uint32) error {
	p, err := openOutput(path, creds{uid, gid, groups}, 0o666&^DefaultUmask)
	if err != nil {
		return err
	}
	return p.Close()
}

func TestPrepareOutput(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir's are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	userDir := filepath.Join(dir, "user")
	groupDir := filepath.Join(dir, "group")
	for _, d := range []string{userDir, groupDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(userDir, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	// Only members of group 3000 may write here.
	if err := os.Chown(groupDir, 0, 3000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(groupDir, 0o770); err != nil {
		t.Fatal(err)
	}
	old := unix.Umask(0o077)
	defer unix.Umask(old)

	out := filepath.Join(userDir, "out")
	if err := prepareOutput(out, 1000, 1000, nil); err != nil {
		t.Fatal(err)
	}
	if uid, gid, mode := owner(t, out); uid != 1000 || gid != 1000 || mode != 0o600 {
		t.Errorf("created %d:%d %o, want 1000:1000 600 (the default umask, 077)", uid, gid, mode)
	}
	// A job's own umask gives the mode, whatever the daemon's.
	wide := filepath.Join(userDir, "wide")
	p, err := openOutput(wide, creds{1000, 1000, nil}, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, _, mode := owner(t, wide); mode != 0o644 {
		t.Errorf("created with mode 644 under umask 077: %o", mode)
	}
	// An existing file is kept (appended to later), not truncated.
	if err := os.WriteFile(out, []byte("run 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prepareOutput(out, 1000, 1000, nil); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(out); string(data) != "run 0\n" {
		t.Errorf("existing output became %q", data)
	}

	tests := []struct {
		name   string
		path   string
		uid    uint32
		groups []uint32
		ok     bool
	}{
		{"other user's directory", filepath.Join(userDir, "x"), 1001, nil, false},
		{"root's directory", filepath.Join(dir, "x"), 1000, nil, false},
		{"group directory without the group", filepath.Join(groupDir, "a"), 1000, nil, false},
		{"group directory with the group", filepath.Join(groupDir, "b"), 1000, []uint32{3000}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := prepareOutput(tc.path, tc.uid, 1000, tc.groups)
			if tc.ok != (err == nil) {
				t.Fatalf("prepareOutput: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrOutput) {
				t.Errorf("error %v does not wrap ErrOutput", err)
			}
			if !tc.ok {
				if _, err := os.Lstat(tc.path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("refused file exists: %v", err)
				}
			}
		})
	}

	// This goroutine's thread kept root's credentials.
	mine := filepath.Join(dir, "mine")
	if err := os.WriteFile(mine, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if uid, _, _ := owner(t, mine); uid != 0 {
		t.Errorf("file made after prepareOutput owned by %d, want 0", uid)
	}
}
