//go:build !unit

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// halfShares: a owns one node's worth and lends it, b owns the other and
// borrows.
const halfShares = `
[[share]]
name = "a"
partition = "gpu"
gpus = 8
strategy = "LEND"
users = ["*"]

[[share]]
name = "b"
partition = "gpu"
gpus = 8
strategy = "LEND_AND_BORROW"
users = ["*"]
`

// nodeCheckpointScript is checkpointScript that also says on which node
// each run ran.
const nodeCheckpointScript = `ck=$SHARQ_CHECKPOINT_DIR/state
if [ -f $ck ]; then
  echo "resumed from $(cat $ck) on $SHARQ_NODE"
  exit 0
fi
trap 'echo step-42 > $ck; echo "saved on $SHARQ_NODE"; exit 0' TERM
echo "first run on $SHARQ_NODE"
while true; do sleep 1; done
`

// TestCheckpointFollowsJob: with one checkpoint_root the partition's nodes
// share (the default), a job preempted on one node resumes on the other
// from its checkpoint, and sharqctl show nodes finds the root shared.
func TestCheckpointFollowsJob(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1", "n2"}, shares: halfShares, grace: "20s"})
	c.script("train.sh", nodeCheckpointScript)
	c.script("fill.sh", "sleep 300\n")
	c.script("short.sh", "sleep 1\n")
	fill := c.qsub("-q", "b", "-N", "fill", "-l", "ngpus=8", "fill.sh")
	c.waitState(fill, "R", time.Minute)
	// The lower-priority one is the victim; it borrows a's node.
	job := c.qsub("-q", "b", "-N", "train", "-p", "-900", "-l", "ngpus=8", "train.sh")
	c.waitState(job, "R", time.Minute)
	out := "train.o" + strings.TrimSuffix(job, ".e2e")
	c.eventually(time.Minute, func() (bool, string) { s := c.readFile(out); return strings.Contains(s, "first run"), s })
	first := strings.TrimPrefix(strings.TrimSpace(c.readFile(out)), "first run on ")
	other := map[string]string{"n1": "n2", "n2": "n1"}[first]
	if other == "" {
		t.Fatalf("first run on %q", first)
	}
	owner := c.qsub("-q", "a", "-N", "owner", "-l", "ngpus=8", "short.sh")
	c.eventually(40*time.Second, func() (bool, string) { s := c.readFile(out); return strings.Contains(s, "saved on "+first), s })
	// Its node goes to the owner; the other frees up when fill goes.
	if _, e, err := c.runAs(alice, "qdel", fill); err != nil {
		t.Fatalf("qdel: %v %s", err, e)
	}
	c.waitState(job, "F", 60*time.Second)
	c.waitState(owner, "F", 40*time.Second)
	want := fmt.Sprintf("first run on %s\nsaved on %s\nresumed from step-42 on %s\n", first, first, other)
	if got := c.readFile(out); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	if cn := c.field(job, "checkpoint_node"); cn != "" {
		t.Errorf("checkpoint_node %q in a partition with shared checkpoints", cn)
	}
	nodes, _, err := c.runAs(0, "sharqctl", "show", "nodes")
	must(t, err)
	if strings.Contains(nodes, "not shared") || strings.Count(nodes, " ext4 ")+strings.Count(nodes, " tmpfs ")+strings.Count(nodes, " xfs ")+strings.Count(nodes, " overlay ") != 2 {
		t.Errorf("sharqctl show nodes:\n%s", nodes)
	}
}

// TestCheckpointsLocal: each node keeps its own checkpoint_root
// (checkpoints = "local"); a preempted job comes back to the node holding
// its checkpoint, and qstat -f says which. The same directories declared
// shared are reported by sharqctl show nodes.
func TestCheckpointsLocal(t *testing.T) {
	dir := t.TempDir()
	c := newCluster(t, spec{nodes: []string{"n1", "n2"}, shares: halfShares, grace: "20s",
		part: `checkpoints = "local"`,
		nodeKeys: map[string]string{
			"n1": fmt.Sprintf("checkpoint_root = %q", filepath.Join(dir, "n1")),
			"n2": fmt.Sprintf("checkpoint_root = %q", filepath.Join(dir, "n2")),
		}})
	c.script("train.sh", nodeCheckpointScript)
	c.script("fill.sh", "sleep 300\n")
	c.script("short.sh", "sleep 1\n")
	job := c.qsub("-q", "b", "-N", "train", "-p", "-900", "-l", "ngpus=8", "train.sh")
	c.waitState(job, "R", time.Minute)
	out := "train.o" + strings.TrimSuffix(job, ".e2e")
	c.eventually(time.Minute, func() (bool, string) { s := c.readFile(out); return strings.Contains(s, "first run"), s })
	first := strings.TrimPrefix(strings.TrimSpace(c.readFile(out)), "first run on ")
	fill := c.qsub("-q", "b", "-N", "fill", "-l", "ngpus=8", "fill.sh")
	c.waitState(fill, "R", time.Minute)
	owner := c.qsub("-q", "a", "-N", "owner", "-l", "ngpus=8", "short.sh")
	c.waitState(owner, "F", 60*time.Second)
	c.waitState(job, "F", 60*time.Second)
	want := fmt.Sprintf("first run on %s\nsaved on %s\nresumed from step-42 on %s\n", first, first, first)
	if got := c.readFile(out); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	if cn := c.field(job, "checkpoint_node"); cn != first {
		t.Errorf("qstat -f checkpoint_node = %q, want %q", cn, first)
	}
	c.runAs(alice, "qdel", fill)
	nodes, _, err := c.runAs(0, "sharqctl", "show", "nodes")
	must(t, err)
	if strings.Contains(nodes, "not shared") {
		t.Errorf("local checkpoints reported:\n%s", nodes)
	}
	// Declared shared, the two directories are a problem on both nodes.
	c.writeConf(strings.Replace(c.readConf(), `checkpoints = "local"`, `checkpoints = "shared"`, 1))
	if _, e, err := c.runAs(0, "sharqctl", "reconfigure"); err != nil {
		t.Fatalf("reconfigure: %v %s", err, e)
	}
	nodes, _, err = c.runAs(0, "sharqctl", "show", "nodes", "--json")
	must(t, err)
	if n := strings.Count(nodes, "is not shared across partition gpu"); n != 2 {
		t.Errorf("%d nodes report the unshared root, want 2:\n%s", n, nodes)
	}
}
