//go:build !unit

package e2e

import (
	"strings"
	"testing"
	"time"
)

// Through the real daemons and qsub: a job over its memory limit says
// "OOM killed" in qstat -f, and a job may not create a user namespace.
func TestMemoryKillAndUserNamespace(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("hog.sh", "dd if=/dev/zero of=/dev/null bs=512M count=1\n")
	c.script("ns.sh", "unshare -U true 2>/dev/null; echo userns=$?\n")
	hog := c.qsub("-q", "a", "-l", "mem=64mb", "hog.sh")
	ns := c.qsub("-q", "a", "-o", "ns.out", "ns.sh")
	c.waitState(hog, "F", 60*time.Second)
	c.waitState(ns, "F", 60*time.Second)
	if got := c.field(hog, "comment"); got != "OOM killed" {
		t.Errorf("comment of a job over its memory limit %q, want \"OOM killed\"", got)
	}
	if got := c.field(hog, "Exit_status"); got != "137" {
		t.Errorf("exit status %q, want 137", got)
	}
	if got := strings.TrimSpace(c.readFile("ns.out")); got != "userns=1" {
		t.Errorf("unshare -U in a job: %q, want userns=1 (refused)", got)
	}
}
