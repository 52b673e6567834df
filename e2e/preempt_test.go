//go:build !unit

package e2e

import (
	"strings"
	"testing"
	"time"
)

// checkpointScript traps SIGTERM, saves a checkpoint and exits; a restarted
// run resumes from the checkpoint.
const checkpointScript = `ck=$SHARQ_CHECKPOINT_DIR/state
if [ -f $ck ]; then
  echo "resumed from $(cat $ck) restart=$SHARQ_RESTART_COUNT"
  exit 0
fi
trap 'echo step-42 > $ck; echo "got TERM, saved"; exit 0' TERM
echo "first run restart=$SHARQ_RESTART_COUNT"
while true; do sleep 1; done
`

func TestCrossSharePreemptionWithCheckpoint(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares, grace: "20s"})
	c.script("train.sh", checkpointScript)
	c.script("short.sh", "echo owner ran\nsleep 2\n")
	borrower := c.qsub("-q", "b", "-N", "borrow", "-l", "ngpus=8", "train.sh")
	c.waitState(borrower, "R", time.Minute)
	out := "borrow.o" + strings.TrimSuffix(borrower, ".e2e")
	c.eventually(time.Minute, func() (bool, string) { s := c.readFile(out); return strings.Contains(s, "first run"), s })

	q, _, _ := c.runAs(alice, "qstat", "-Q")
	if !strings.Contains(q, "b") {
		t.Fatalf("qstat -Q:\n%s", q)
	}
	owner := c.qsub("-q", "a", "-N", "owner", "-l", "ngpus=4", "short.sh")
	c.waitState(owner, "F", 40*time.Second)
	c.waitState(borrower, "F", 40*time.Second)

	got := c.readFile(out)
	want := "first run restart=0\ngot TERM, saved\nresumed from step-42 restart=1\n"
	if got != want {
		t.Fatalf("borrower output %q, want %q", got, want)
	}
	if n := c.field(borrower, "preemption_count"); n != "1" {
		t.Fatalf("preemption_count %q", n)
	}
	if st := c.field(borrower, "Exit_status"); st != "0" {
		t.Fatalf("borrower exit %q", st)
	}
	hist := c.field(borrower, "history.3")
	full, _, _ := c.runAs(0, "qstat", "-f", "-x", borrower)
	if !strings.Contains(full, "preempted (cross_share) for "+owner) {
		t.Fatalf("history lacks the preemption (%s):\n%s", hist, full)
	}
}

func TestInSharePreemption(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares, grace: "20s"})
	c.script("train.sh", checkpointScript)
	c.script("urgent.sh", "echo urgent\n")
	// PBS's -p orders jobs and never makes one preemptible: the owner
	// lowers its sharq priority (the share's default, 100) for that.
	low := c.qsub("-q", "b", "-N", "low", "-p", "-900", "-l", "ngpus=4", "train.sh")
	c.waitState(low, "R", time.Minute)
	if _, errOut, err := c.runAs(alice, "sharqctl", "job", "priority", low, "10"); err != nil {
		t.Fatalf("lowering %s: %v %s", low, err, errOut)
	}
	out := "low.o" + strings.TrimSuffix(low, ".e2e")
	c.eventually(time.Minute, func() (bool, string) { s := c.readFile(out); return strings.Contains(s, "first run"), s })
	// Another job of the same priority must not preempt it ...
	same := c.qsub("-q", "b", "-N", "same", "-p", "900", "-l", "ngpus=4", "train.sh")
	c.waitState(same, "R", time.Minute) // it borrows the 4 idle GPUs of share a
	if _, errOut, err := c.runAs(alice, "sharqctl", "job", "priority", same, "10"); err != nil {
		t.Fatalf("lowering %s: %v %s", same, err, errOut)
	}
	// ... a higher-priority job of the share does. The share is over its
	// quota (8 > 4), so it cannot reclaim across shares: in-share
	// preemption takes the most recently started lower-priority job.
	urgent := c.qsub("-q", "b", "-N", "urgent", "-l", "ngpus=4", "urgent.sh")
	c.waitState(urgent, "F", 40*time.Second)
	full, _, _ := c.runAs(0, "qstat", "-f", "-x", low, same)
	if !strings.Contains(full, "preempted (in_share) for "+urgent) {
		t.Fatalf("no preemption for %s:\n%s", urgent, full)
	}
	c.runAs(alice, "qdel", low, same)
}
