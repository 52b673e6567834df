//go:build !unit

package containerd_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// field returns the value of "key=value" in out ("" when absent).
func field(out, key string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	return ""
}

func TestForkBombBounded(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "pids")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	// The bomb runs in a subshell, which dies at its first failed fork;
	// the count uses only shell built-ins (no fork left to make one).
	const tries, limit = 300, 48
	s := userSpec("pids", dir, "bomb", fmt.Sprintf(`grep ^Seccomp: /proc/self/status
(for i in $(seq %d); do sleep 1000 & done) 2>/dev/null
set -- /proc/[0-9]*
echo procs=$#`, tries))
	s.Pids = limit
	code, out := runJob(t, rt, s)
	procs, err := strconv.Atoi(field(out, "procs"))
	if code != 0 || err != nil {
		t.Fatalf("status %d, output %q", code, out)
	}
	if procs > limit {
		t.Errorf("%d processes ran in a job limited to %d", procs, limit)
	}
	if !strings.Contains(out, "Seccomp:\t2") {
		t.Errorf("job without a seccomp filter: %q", out)
	}
}

func TestUserNamespaces(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "userns")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	for _, tc := range []struct {
		name   string
		uid    uint32
		allow  bool
		wantOK bool
	}{
		{"user refused", 1000, false, false},
		{"root refused", 0, false, false},
		{"user allowed by the partition", 1000, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := userSpec("userns", dir, "userns-"+strconv.Itoa(int(tc.uid))+strconv.FormatBool(tc.allow),
				`unshare -U -r sh -c 'echo inside=$(id -u)'; echo rc=$?
unshare -n true; echo netrc=$?`)
			s.UID, s.GID, s.UserNS = tc.uid, tc.uid, tc.allow
			code, out := runJob(t, rt, s)
			if code != 0 {
				t.Fatalf("status %d, output %q", code, out)
			}
			ok := field(out, "rc") == "0" && field(out, "inside") == "0"
			if ok != tc.wantOK {
				t.Errorf("unshare -U -r: succeeded %v, want %v; output %q", ok, tc.wantOK, out)
			}
			// A network namespace without a user namespace needs
			// CAP_SYS_ADMIN, which no job has.
			if tc.uid != 0 && field(out, "netrc") == "0" {
				t.Errorf("unshare -n succeeded: %q", out)
			}
		})
	}
}

func TestNetworkNone(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "netns")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	hostNS, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		network string
		same    bool
	}{{"", true}, {"host", true}, {"none", false}} {
		t.Run("network="+tc.network, func(t *testing.T) {
			s := userSpec("netns", dir, "net-"+tc.network, `echo ns=$(readlink /proc/self/ns/net)
ip -o link show | cut -d: -f2 | tr -d ' ' | sort | tr '\n' ,; echo
ip -o link show lo`)
			s.Network = tc.network
			code, out := runJob(t, rt, s)
			if code != 0 {
				t.Fatalf("status %d, output %q", code, out)
			}
			if same := field(out, "ns") == hostNS; same != tc.same {
				t.Errorf("job's network namespace %s, host's %s: same %v, want %v", field(out, "ns"), hostNS, same, tc.same)
			}
			if !tc.same {
				lines := strings.Split(out, "\n")
				if len(lines) < 3 || lines[1] != "lo," || !strings.Contains(lines[2], "UP") {
					t.Errorf("network none: want only lo, up; output %q", out)
				}
			}
		})
	}
}
