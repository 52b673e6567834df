package localcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testConfig writes a configuration whose files all live under dir/run and
// dir/state (extra is appended to [cluster]) and returns its path.
func testConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	run, state := filepath.Join(dir, "run"), filepath.Join(dir, "state")
	text := fmt.Sprintf(`[cluster]
name = "t"
spool_dir = %[2]q
socket = %[1]q
listen = "127.0.0.1:16820"
secret_file = %[3]q
checkpoint_root = %[4]q
%[7]s
[runtime]
containerd_socket = %[5]q

[[partition]]
name = "gpu"
nodes = "n1"
default_image = "localhost/sharq/busybox:latest"

[[node]]
names = "n1"
gpus = 2
gpu_devices = [%[6]q, %[8]q]
extra_devices = []

[[share]]
name = "a"
partition = "gpu"
gpus = 2
strategy = "LEND"
users = ["*"]
`, run+"/s.sock", state+"/spool", run+"/secret", state+"/ckpt", run+"/c/c.sock", run+"/dev/gpu0", extra, run+"/dev/gpu1")
	p := filepath.Join(dir, "cluster.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewLayout(t *testing.T) {
	dir := t.TempDir()
	good := testConfig(t, dir, "")
	outside := t.TempDir()
	bad := testConfig(t, outside, "")
	tests := []struct {
		name    string
		config  string
		run     string
		wantErr error
	}{
		{"shipped local.toml", "../../contrib/examples/local.toml", "", nil},
		{"paths under the dirs", good, filepath.Join(dir, "run"), nil},
		{"paths outside the dirs", bad, filepath.Join(dir, "run"), ErrOutsideDirs},
		{"run dir is /", good, "/", ErrOutsideDirs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Config: tc.config, RunDir: tc.run}
			if tc.run != "" {
				o.StateDir = filepath.Join(dir, "state")
			}
			o.setDefaults()
			l, err := newLayout(o)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("newLayout: %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if len(l.nodes) != 1 || len(l.devices) == 0 || len(l.images()) != 1 {
				t.Fatalf("layout nodes %v devices %v images %v", l.nodes, l.devices, l.images())
			}
		})
	}
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "up.lock")
	l, stale, err := acquireLock(path)
	if err != nil || len(stale) != 0 {
		t.Fatalf("acquireLock: %v, stale %v", err, stale)
	}
	if err := l.add(pidEntry{"sharqd-n1", 4242, "sharqd"}); err != nil {
		t.Fatal(err)
	}
	_, _, err = acquireLock(path)
	if !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second acquireLock: %v, want ErrAlreadyRunning naming pid %d", err, os.Getpid())
	}
	l.release()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock file after release: %v", err)
	}
	// A killed run leaves its file, unlocked: the next run gets the pids.
	if err := os.WriteFile(path, []byte("sharq-up 4000\ncontainerd 4001\nsharqd-n1 4002 sharqd\nbroken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, stale, err = acquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	want := []pidEntry{{"sharq-up", 4000, ""}, {"containerd", 4001, ""}, {"sharqd-n1", 4002, "sharqd"}}
	if fmt.Sprint(stale) != fmt.Sprint(want) {
		t.Fatalf("stale = %v, want %v", stale, want)
	}
	if got := readPids(l.f); fmt.Sprint(got) != fmt.Sprint([]pidEntry{{"sharq-up", os.Getpid(), ""}}) {
		t.Fatalf("lock file now holds %v", got)
	}
}

func TestSetupProfile(t *testing.T) {
	home := t.TempDir()
	d := &demoUser{name: "x", uid: os.Getuid(), gid: os.Getgid(), home: home}
	if err := os.WriteFile(filepath.Join(home, ".profile"), []byte("umask 022\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := d.setupProfile("/run/s.sock", "/var/lib/b"); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(home, ".profile"))
	if n := strings.Count(string(b), profileMarker); n != 1 || !strings.HasPrefix(string(b), "umask 022\n") ||
		!strings.Contains(string(b), "export SHARQ_SOCKET=/run/s.sock\n") {
		t.Fatalf(".profile:\n%s", b)
	}
}

func TestWriteSecret(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run", "secret")
	if err := writeSecret(p); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if len(strings.TrimSpace(string(first))) != 64 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret %q mode %v", first, fi.Mode())
	}
	if err := writeSecret(p); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(p); string(again) != string(first) {
		t.Fatalf("writeSecret replaced an existing secret")
	}
}

func TestCompactDevices(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"none", nil, "(none)"},
		{"one", []string{"/d/gpu0"}, "/d/gpu0"},
		{"range", []string{"/d/gpu0", "/d/gpu1", "/d/gpu7"}, "/d/gpu0..gpu7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := compactDevices(tc.in); got != tc.want {
				t.Errorf("compactDevices(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// fakeBin makes BinDir with executables of every needed name.
func fakeBin(t *testing.T, skip string) string {
	dir := t.TempDir()
	for _, name := range append([]string{"sharqctld", "sharqd"}, clientCommands...) {
		if name == skip {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
