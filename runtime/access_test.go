//go:build !unit

package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// tree makes, under a fresh 0755 directory:
//
//	alice/          0700 uid 2000 (another user's home)
//	alice/pub/      0755 uid 2000, pub/notes 0644
//	bob/            0755 uid 1000 (the job's user)
//	bob/ro/         0555 uid 1000
//	bob/link -> ../alice/pub, bob/out-link -> ../alice/pub/notes
//	bob/fifo        a FIFO of uid 1000
//	shared/         0770 root:3000
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir's are 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(p string, mode os.FileMode, uid, gid int) {
		if err := os.Mkdir(filepath.Join(dir, p), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, p), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(dir, p), uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	mk("alice", 0o700, 2000, 2000)
	mk("alice/pub", 0o755, 2000, 2000)
	mk("bob", 0o755, 1000, 1000)
	mk("bob/ro", 0o555, 1000, 1000)
	mk("shared", 0o770, 0, 3000)
	if err := os.WriteFile(filepath.Join(dir, "alice/pub/notes"), []byte("alice's\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../alice/pub", filepath.Join(dir, "bob/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../alice/pub/notes", filepath.Join(dir, "bob/out-link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(dir, "bob/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(dir, "bob/fifo"), 1000, 1000); err != nil {
		t.Fatal(err)
	}
	return dir
}

var bob = creds{uid: 1000, gid: 1000}

func TestOpenWorkDir(t *testing.T) {
	dir := tree(t)
	for _, tc := range []struct {
		name    string
		path    string
		c       creds
		wantErr string // "" = accepted
	}{
		{"own directory", dir + "/bob", bob, ""},
		{"group directory with the group", dir + "/shared", creds{1000, 1000, []uint32{3000}}, ""},
		{"root anywhere", dir + "/alice/pub", creds{}, ""},
		{"under another user's 0700 home", dir + "/alice/pub", bob, "permission denied"},
		{"another user's home", dir + "/alice", bob, "permission denied"},
		{"group directory without the group", dir + "/shared", bob, "permission denied"},
		{"not writable", dir + "/bob/ro", bob, "not writable"},
		{"symbolic link to a reachable directory", dir + "/bob/link", creds{}, "symbolic link"},
		{"symbolic link in the path", dir + "/bob/link/../../bob", bob, "symbolic link"},
		{"missing", dir + "/bob/nope", bob, "no such file"},
		{"a file", dir + "/alice/pub/notes", creds{}, "not a directory"},
		{"host /proc", "/proc", creds{}, "on proc"},
		{"host /proc/1 as its owner", "/proc/1", creds{}, "on proc"},
		{"host /sys", "/sys/kernel", creds{}, "on sysfs"},
		{"host /dev", "/dev", creds{}, "/dev"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := openWorkDir(tc.path, tc.c)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				defer p.Close()
				if target, err := os.Readlink(p.Source()); err != nil || target != filepath.Clean(tc.path) {
					t.Errorf("mount source %s names %q (%v), want %s", p.Source(), target, err, tc.path)
				}
				return
			}
			if err == nil {
				p.Close()
				t.Fatalf("accepted, want an error with %q", tc.wantErr)
			}
			if !errors.Is(err, ErrWorkDir) || !strings.Contains(strings.ToLower(err.Error()), tc.wantErr) {
				t.Errorf("error %v, want ErrWorkDir with %q", err, tc.wantErr)
			}
		})
	}
}

func TestOpenOutput(t *testing.T) {
	dir := tree(t)
	for _, tc := range []struct {
		name    string
		path    string
		c       creds
		wantErr string
	}{
		{"new file", dir + "/bob/o", bob, ""},
		{"/dev/null", "/dev/null", bob, ""},
		{"under another user's 0700 home", dir + "/alice/pub/notes", bob, "permission denied"},
		{"symbolic link to another user's file", dir + "/bob/out-link", bob, "symbolic link"},
		{"symbolic link, even for root", dir + "/bob/out-link", creds{}, "symbolic link"},
		{"a FIFO is refused, not waited on", dir + "/bob/fifo", bob, ""},
		{"a directory", dir + "/bob/ro", bob, "is a directory"},
		{"another device", "/dev/zero", creds{}, "not a regular file"},
		{"a file of /proc", "/proc/self/attr/current", creds{}, ""},
		{"a file of /sys", "/sys/kernel/uevent_helper", creds{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var (
				p   pinned
				err error
			)
			go func() { p, err = openOutput(tc.path, tc.c, 0o600); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("openOutput hangs")
			}
			refusedAnyway := strings.HasPrefix(tc.path, "/proc") || strings.HasPrefix(tc.path, "/sys") || strings.HasSuffix(tc.path, "fifo")
			if tc.wantErr == "" && !refusedAnyway {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				p.Close()
				return
			}
			if err == nil {
				p.Close()
				t.Fatalf("accepted")
			}
			if !errors.Is(err, ErrOutput) || !strings.Contains(strings.ToLower(err.Error()), tc.wantErr) {
				t.Errorf("error %v, want ErrOutput with %q", err, tc.wantErr)
			}
		})
	}
	if b, _ := os.ReadFile(dir + "/alice/pub/notes"); string(b) != "alice's\n" {
		t.Errorf("another user's file became %q", b)
	}
}

func TestWalkNoSymlinks(t *testing.T) {
	dir := tree(t)
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{dir + "/bob", true},
		{dir + "/alice/pub/notes", true},
		{dir + "/bob/link", false},
		{dir + "/bob/link/notes", false},
		{dir + "/bob/../bob", false},
		{dir + "/bob/out-link", false},
	} {
		fd, err := walkNoSymlinks(tc.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		if (err == nil) != tc.ok {
			t.Errorf("walkNoSymlinks(%s): %v, want ok=%v", tc.path, err, tc.ok)
		}
	}
}

// A path swapped after the check, before runc's mount, is caught: here the
// "container" is this process (its root is the host's).
func TestVerifyCatchesSwap(t *testing.T) {
	dir := tree(t)
	wd := dir + "/bob"
	paths, err := OpenJobPaths(Spec{WorkDir: wd, Stdout: wd + "/o", Stderr: wd + "/o", UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer paths.Close()
	self := uint32(os.Getpid())
	check := func(s Spec) error {
		// Only the work directory: the outputs are not at /.sharq here.
		p := &JobPaths{workDir: paths.workDir}
		return p.Verify(self, s)
	}
	if err := check(Spec{WorkDir: wd}); err != nil {
		t.Fatalf("unchanged work directory: %v", err)
	}
	if err := os.Rename(wd, dir+"/bob.old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir+"/alice/pub", wd); err != nil {
		t.Fatal(err)
	}
	if err := check(Spec{WorkDir: wd}); !errors.Is(err, ErrWorkDir) || !strings.Contains(err.Error(), "changed") {
		t.Errorf("work directory swapped for a link: %v, want ErrWorkDir ... changed", err)
	}
}

// BenchmarkOpenJobPaths measures the checks of one start: the work
// directory and two output files opened as the user.
func BenchmarkOpenJobPaths(b *testing.B) {
	dir := b.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	if err := os.Chown(dir, 1000, 1000); err != nil {
		b.Fatal(err)
	}
	s := Spec{WorkDir: dir, Stdout: dir + "/o", Stderr: dir + "/e", UID: 1000, GID: 1000, Groups: []uint32{2000}}
	for b.Loop() {
		p, err := OpenJobPaths(s)
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}
