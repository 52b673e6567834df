//go:build !unit

package e2e

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPBSJobCommands drives qsig, qrerun, qmove, qorder and tracejob
// through the real daemons and containerd: a signal reaches the job's
// trap, a rerun restarts the job as its next run, a held job moves and
// is reordered, a running one cannot move, and tracejob shows all of it.
func TestPBSJobCommands(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("sig.sh", "trap 'echo usr1 >> sig.$PBS_JOBID' USR1\necho $SHARQ_RESTART_COUNT >> runs.$PBS_JOBID\nwhile :; do sleep 1; done\n")
	c.script("held.sh", "true\n")
	exit := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("not an exit status: %v", err)
		}
		return 0
	}
	file := c.readFile

	id := c.qsub("-q", "b", "-l", "ngpus=1", "sig.sh")
	c.eventually(time.Minute, func() (bool, string) { return file("runs."+id) == "0\n", file("runs." + id) })
	if _, errOut, err := c.runAs(alice, "qsig", "-s", "USR1", id); err != nil {
		t.Fatalf("qsig -s USR1: %v %s", err, errOut)
	}
	c.eventually(time.Minute, func() (bool, string) { return file("sig."+id) == "usr1\n", file("sig." + id) })
	if _, errOut, err := c.runAs(alice, "qsig", "-s", "suspend", id); exit(err) != 2 || !strings.Contains(errOut, "sharq does not suspend jobs") {
		t.Errorf("qsig -s suspend: exit %d, %q", exit(err), errOut)
	}

	// A running job cannot move (PBS's words and status).
	if _, errOut, err := c.runAs(alice, "qmove", "a", id); exit(err) != 168 || !strings.HasPrefix(errOut, "qmove: Request invalid for state of job "+id) {
		t.Errorf("qmove of a running job: exit %d, %q", exit(err), errOut)
	}
	// qrerun: SIGTERM (the script exits), back to the queue, run 1.
	if _, errOut, err := c.runAs(alice, "qrerun", id); err != nil {
		t.Fatalf("qrerun: %v %s", err, errOut)
	}
	c.eventually(time.Minute, func() (bool, string) { return file("runs."+id) == "0\n1\n", file("runs." + id) })
	c.waitState(id, "R", time.Minute)
	if n := c.field(id, "preemption_count"); n != "" && n != "0" {
		t.Errorf("preemption_count after a rerun: %q", n)
	}

	// Held jobs: one moves from a to b, then two of b exchange places.
	h1 := c.qsub("-h", "-q", "a", "held.sh")
	h2 := c.qsub("-h", "-q", "b", "held.sh")
	if _, errOut, err := c.runAs(alice, "qmove", "b", h1); err != nil {
		t.Fatalf("qmove b %s: %v %s", h1, err, errOut)
	}
	if q := c.field(h1, "queue"); q != "b" {
		t.Errorf("queue after qmove: %q", q)
	}
	if _, errOut, err := c.runAs(alice, "qmove", "nope", h2); exit(err) != 170 || errOut != "qmove: Unknown queue nope\n" {
		t.Errorf("qmove to an unknown share: exit %d, %q", exit(err), errOut)
	}
	if _, errOut, err := c.runAs(alice, "qorder", h1, h2); err != nil {
		t.Fatalf("qorder: %v %s", err, errOut)
	}
	if _, errOut, err := c.runAs(alice, "qsig", h2); exit(err) != 168 || !strings.HasPrefix(errOut, "qsig: Request invalid for state of job "+h2) {
		t.Errorf("qsig of a held job: exit %d, %q", exit(err), errOut)
	}

	out, errOut, err := c.runAs(alice, "tracejob", id)
	if err != nil || !strings.HasPrefix(out, "\nJob: "+id+"\n\n") {
		t.Fatalf("tracejob %s: %v %s\n%s", id, err, errOut, out)
	}
	for _, w := range []string{"  S    submitted to b\n", "  S    signal SIGUSR1 sent by ", "  S    rerun by ", "  S    requeued: rerun (qrerun)"} {
		if !strings.Contains(out, w) {
			t.Errorf("tracejob %s lacks %q:\n%s", id, w, out)
		}
	}
	if out, _, _ := c.runAs(alice, "tracejob", h1); !strings.Contains(out, "  S    moved from a to b by ") || !strings.Contains(out, "place exchanged with "+h2) {
		t.Errorf("tracejob %s:\n%s", h1, out)
	}
	if _, errOut, err := c.runAs(alice, "tracejob", "999999"); exit(err) != 153 || errOut != "tracejob: Couldn't find Job Id 999999\n" {
		t.Errorf("tracejob of an unknown job: exit %d, %q", exit(err), errOut)
	}
	for _, j := range []string{id, h1, h2} {
		c.runAs(alice, "qdel", j)
	}
}
