//go:build !unit

package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestKill9BothDaemons kills sharqd and sharqctld with SIGKILL while jobs
// run and wait: the containers keep running, both daemons recover, and no
// job is lost or run twice.
func TestKill9BothDaemons(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("count.sh", "echo start >> runs.$PBS_JOBID\nsleep 8\necho done >> runs.$PBS_JOBID\n")
	running := c.qsub("-q", "a", "-l", "ngpus=4", "count.sh")
	c.waitState(running, "R", time.Minute)
	c.eventually(time.Minute, func() (bool, string) { s := c.readFile("runs." + running); return s == "start\n", s })

	kill9(c.nodes["n1"])
	// A job queued while the node daemon is down, and one held.
	queued := c.qsub("-q", "a", "-l", "ngpus=4", "count.sh")
	time.Sleep(500 * time.Millisecond)
	kill9(c.ctld)
	c.startCtld()
	c.startNode("n1")
	c.waitNodes(1)

	for _, id := range []string{running, queued} {
		c.waitState(id, "F", 60*time.Second)
		if got := c.readFile("runs." + id); got != "start\ndone\n" {
			t.Fatalf("job %s ran %q, want exactly one start and one done", id, got)
		}
		if st := c.field(id, "Exit_status"); st != "0" {
			t.Fatalf("job %s exit %q", id, st)
		}
	}
	if n := c.field(running, "preemption_count"); n != "0" {
		t.Fatalf("the surviving job was counted as preempted: %s", n)
	}
}

func TestTwoNodeJobAllOrNothing(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1", "n2"}, shares: `
[[share]]
name = "a"
partition = "gpu"
gpus = 16
strategy = "RESERVE"
users = ["*"]
`})
	c.script("busy.sh", "sleep 4\n")
	c.script("multi.sh", "cat $PBS_NODEFILE >> nodefile.$PBS_JOBID\necho rank-ok\n")
	busy := c.qsub("-q", "a", "-l", "ngpus=8", "busy.sh")
	c.waitState(busy, "R", time.Minute)
	multi := c.qsub("-q", "a", "-N", "multi", "-l", "select=2:ngpus=8", "multi.sh")
	time.Sleep(time.Second)
	if st := c.state(multi); st != "Q" {
		t.Fatalf("2-node job started while one node was busy: %s", st)
	}
	c.waitState(multi, "F", 40*time.Second)
	exec := c.field(multi, "exec_host")
	if !strings.Contains(exec, "n1") || !strings.Contains(exec, "n2") {
		t.Fatalf("exec_host %q", exec)
	}
	out := c.readFile("multi.o" + strings.TrimSuffix(multi, ".e2e"))
	if strings.Count(out, "rank-ok") != 2 {
		t.Fatalf("output %q: the job did not run on both nodes", out)
	}
	if nf := c.readFile("nodefile." + multi); nf != "n1\nn2\nn1\nn2\n" {
		t.Fatalf("PBS_NODEFILE %q", nf)
	}
}

func TestReconfigureWithBadFile(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	good := c.readConf()
	c.writeConf(strings.Replace(good, `strategy = "LEND"`, `strategy = "LENDX"`, 1))
	_, errOut, err := c.runAs(0, "sharqctl", "reconfigure")
	if err == nil || !strings.Contains(errOut, "cluster.toml:") || !strings.Contains(errOut, "LENDX") {
		t.Fatalf("bad reconfigure: %v %q", err, errOut)
	}
	out, _, _ := c.runAs(alice, "qstat", "-Q")
	if !strings.Contains(out, "LEND ") && !strings.Contains(out, "LEND\n") {
		t.Fatalf("old config gone:\n%s", out)
	}
	c.writeConf(strings.Replace(good, `name = "a"`, `name = "a2"`, 1))
	if _, errOut, err := c.runAs(0, "sharqctl", "reconfigure"); err != nil {
		t.Fatalf("good reconfigure: %v %s", err, errOut)
	}
	if _, errOut, err := c.runAs(alice, "qsub", "-q", "a", "--", "true"); err == nil || !strings.Contains(errOut, "unknown queue") {
		t.Fatalf("removed share still takes jobs: %v %s", err, errOut)
	}
}
