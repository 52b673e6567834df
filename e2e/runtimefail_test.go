//go:build !unit

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/internal/testenv"
)

// brokenRuncContainerd starts a containerd whose runc fails every create
// the way runc does on a node without its cgroup mount, while the file
// broken exists (and is the real runc otherwise). It returns its socket
// and that file.
func brokenRuncContainerd(t *testing.T) (sock, broken string) {
	t.Helper()
	real, err := exec.LookPath("runc")
	if err != nil {
		t.Fatalf("runc is needed (make deps installs it): %v", err)
	}
	bin, err := os.MkdirTemp("", "sharq-runc-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(bin) })
	must(t, os.Chmod(bin, 0o755))
	broken = filepath.Join(bin, "broken")
	must(t, os.WriteFile(broken, nil, 0o644))
	script := "#!/bin/sh\nif [ -e " + broken + " ]; then for a; do [ \"$a\" = create ] && { echo 'runc create failed: no cgroup mount found in mountinfo' >&2; exit 1; }; done; fi\nexec " + real + " \"$@\"\n"
	must(t, os.WriteFile(filepath.Join(bin, "runc"), []byte(script), 0o755))
	// containerd, and the shims it starts, find runc on its PATH; the
	// PATH is set back at once for everything else.
	path := os.Getenv("PATH")
	os.Setenv("PATH", bin+":"+path)
	d, err := testenv.StartContainerd("")
	os.Setenv("PATH", path)
	must(t, err)
	t.Cleanup(func() { d.Stop() })
	return d.Socket, broken
}

// TestRuntimeFailingNode (issue 29, F4): of two nodes, n2's runc cannot
// create containers. The jobs sent there fail as the node's fault, n2 is
// drained with RuntimeFailing, and every job runs on n1 with none charged
// a start failure. Once runc is repaired, n2's own runtime self-test
// passes and clears the drain: it takes jobs again, with no admin and no
// job as the test.
func TestRuntimeFailingNode(t *testing.T) {
	sock, broken := brokenRuncContainerd(t)
	c := newCluster(t, spec{nodes: []string{"n1", "n2"}, shares: openShares, nodeContainerd: map[string]string{"n2": sock}})
	// Each subjob takes a node's 4 CPUs: the first pass sends one to
	// each node.
	start := time.Now()
	arr := c.qsub("-q", "a", "-J", "0-5", "-l", "ncpus=4", "-o", "/dev/null", "-e", "/dev/null", "--", "/bin/sh", "-c", "sleep 1")
	c.eventually(time.Minute, func() (bool, string) {
		out, _, _ := c.runAs(0, "sharqctl", "show", "nodes")
		return strings.Contains(out, "RuntimeFailing"), out
	})
	drained := time.Since(start)
	out, _, _ := c.runAs(0, "sharqctl", "show", "nodes")
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "n1" && strings.Contains(l, "RuntimeFailing") {
			t.Errorf("the healthy node was drained:\n%s", out)
		}
	}
	t.Logf("n2 drained %v after the submission:\n%s", drained.Round(time.Millisecond), out)
	for i := range 6 {
		id := strings.Replace(arr, "[]", "["+string(rune('0'+i))+"]", 1)
		c.waitState(id, "F", 2*time.Minute)
		if st, host, comment := c.field(id, "Exit_status"), c.field(id, "exec_host"), c.field(id, "comment"); st != "0" || !strings.HasPrefix(host, "n1") {
			t.Errorf("%s: exit status %q on %q (%s), want 0 on n1", id, st, host, comment)
		}
	}

	if !strings.Contains(c.logs.String(), `msg="container runtime self-test failed" node=n2`) {
		t.Errorf("n2 ran no self-test while runc was broken")
	}

	must(t, os.Remove(broken))
	repaired := time.Now()
	c.eventually(2*time.Minute, func() (bool, string) {
		out, _, _ := c.runAs(0, "sharqctl", "show", "nodes")
		return !strings.Contains(out, "RuntimeFailing") && strings.Count(out, " up ") == 2, out
	})
	t.Logf("n2 resumed by its self-test %v after runc was repaired", time.Since(repaired).Round(time.Millisecond))
	// Two jobs of a node's CPUs each at once: one runs on n2.
	both := c.qsub("-q", "a", "-J", "0-1", "-l", "ncpus=4", "-o", "/dev/null", "-e", "/dev/null", "--", "/bin/sh", "-c", "sleep 2")
	var hosts []string
	for i := range 2 {
		id := strings.Replace(both, "[]", "["+string(rune('0'+i))+"]", 1)
		c.waitState(id, "F", 2*time.Minute)
		if st := c.field(id, "Exit_status"); st != "0" {
			t.Errorf("%s after the repair: exit status %q (%s)", id, st, c.field(id, "comment"))
		}
		hosts = append(hosts, c.field(id, "exec_host"))
	}
	if !strings.HasPrefix(hosts[0], "n2") && !strings.HasPrefix(hosts[1], "n2") {
		t.Errorf("after the repair the jobs ran on %v, want one on n2", hosts)
	}
}
