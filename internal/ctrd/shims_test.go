package ctrd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for a shim (fakeShim): it starts
// a child, its "task", and waits.
func TestMain(m *testing.M) {
	if os.Getenv("SHARQ_FAKE_SHIM") != "" {
		child := exec.Command("sleep", "600")
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
		_ = child.Wait()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeShim starts a process whose command line is argv0 -namespace ns -id
// x -address socket, with a child; it returns the process and its child's
// pid.
func fakeShim(t *testing.T, argv0, socket string) (*exec.Cmd, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := &exec.Cmd{Path: exe, Args: []string{argv0, "-namespace", "ns", "-id", "x", "-address", socket},
		Env: append(os.Environ(), "SHARQ_FAKE_SHIM=1")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	child, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("fake shim: child pid %q: %v", buf[:n], err)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	return cmd, child
}

// gone says whether pid has exited (a zombie counts: nobody may reap it).
func gone(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	state, _, ok := parseStat(stat)
	return ok && state == "Z"
}

func TestKillShims(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "c.sock")
	mine, mineChild := fakeShim(t, "/usr/bin/containerd-shim-runc-v2", sock)
	other, otherChild := fakeShim(t, "/usr/bin/containerd-shim-runc-v2", sock+".other")
	notShim, _ := fakeShim(t, "/usr/bin/containerd", sock)

	n, err := killShims(sock)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("killed %d shims, want 1", n)
	}
	if err := mine.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the shim of %s: %v, want killed", sock, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !gone(mineChild) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone(mineChild) {
		t.Errorf("the shim's child %d outlived it", mineChild)
	}
	for _, c := range []*exec.Cmd{other, notShim} {
		if err := c.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("%v (another containerd's shim, or no shim) was killed: %v", c.Args, err)
		}
	}
	if gone(otherChild) {
		t.Errorf("another containerd's shim's child was killed")
	}
	if n, err := killShims(filepath.Join(t.TempDir(), "none.sock")); n != 0 || err != nil {
		t.Errorf("no shim of that socket: %d, %v", n, err)
	}
}

func TestIsShimOf(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want bool
	}{
		{"runc v2 shim", []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "n", "-id", "x", "-address", "/s"}, true},
		{"other address", []string{"/usr/bin/containerd-shim-runc-v2", "-address", "/t"}, false},
		{"address last", []string{"containerd-shim-runc-v2", "-id", "-address"}, false},
		{"not a shim", []string{"/usr/bin/containerd", "-address", "/s"}, false},
		{"empty", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isShimOf(tc.argv, "/s"); got != tc.want {
				t.Errorf("isShimOf(%q) = %v, want %v", tc.argv, got, tc.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name  string
		stat  string
		state string
		ppid  int
		ok    bool
	}{
		{"plain", "123 (sleep) S 45 123 123 0", "S", 45, true},
		{"comm with spaces and parens", "9 (a) b (c)) R 7 9", "R", 7, true},
		{"zombie", "9 (containerd-shim) Z 1 9", "Z", 1, true},
		{"truncated", "9 (x) S", "", 0, false},
		{"no comm", "9 x S 7", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state, ppid, ok := parseStat([]byte(tc.stat))
			if state != tc.state || ppid != tc.ppid || ok != tc.ok {
				t.Errorf("parseStat(%q) = %q, %d, %v, want %q, %d, %v", tc.stat, state, ppid, ok, tc.state, tc.ppid, tc.ok)
			}
		})
	}
}
