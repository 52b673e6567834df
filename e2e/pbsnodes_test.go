//go:build !unit

package e2e

import (
	"strings"
	"testing"
)

// TestPbsnodesAdminMarks: an admin takes a node offline with a comment,
// clears it with -c and removes the comment, through the real client and
// controller; a user may do none of it.
func TestPbsnodesAdminMarks(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	pbsnodes := func(uid int, args ...string) string {
		t.Helper()
		out, errOut, err := c.runAs(uid, "pbsnodes", args...)
		if err != nil {
			t.Fatalf("pbsnodes %v: %v %s", args, err, errOut)
		}
		return out
	}
	pbsnodes(0, "-o", "-C", "DIMM errors", "n1")
	// The comment comes first, the node's own problems (on a small machine,
	// fewer CPUs than the harness declares) after it.
	if out := pbsnodes(alice, "-l"); !strings.HasPrefix(out, "n1                   offline DIMM errors") {
		t.Errorf("pbsnodes -l after -o -C: %q", out)
	}
	if _, errOut, err := c.runAs(alice, "pbsnodes", "-C", "mine", "n1"); err == nil || !strings.Contains(errOut, "only admins") {
		t.Errorf("a user's pbsnodes -C: %v %q", err, errOut)
	}
	if _, errOut, err := c.runAs(0, "pbsnodes", "-C", "a\x1b[2Jb", "n1"); err == nil || !strings.Contains(errOut, "character U+001B") {
		t.Errorf("pbsnodes -C with an escape: %v %q", err, errOut)
	}
	pbsnodes(0, "-c", "n1")
	if out := pbsnodes(alice, "n1"); !strings.Contains(out, "     state = free\n") || !strings.Contains(out, "     comment = DIMM errors") {
		t.Errorf("pbsnodes n1 after -c:\n%s", out)
	}
	pbsnodes(0, "-C", "", "n1")
	if out := pbsnodes(alice, "n1"); strings.Contains(out, "DIMM") {
		t.Errorf("pbsnodes n1 after -C \"\":\n%s", out)
	}
}
