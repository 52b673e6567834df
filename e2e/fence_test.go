//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

// fenceTiming: short enough that a partition plays out in seconds. The
// node fences 1.5 s (a quarter of the lease) before its lease ends; the
// controller requeues 1.5 s (a heartbeat and a second) after.
const fenceTiming = `heartbeat_interval = "500ms"
node_timeout = "2s"
job_lease = "6s"
`

// fenceScript records, in the shared home directory, each run's start, its
// SIGTERM and its end, with the node and the time (/proc/uptime: one clock
// for every host of the lab, which share this machine's kernel). The first
// run runs until stopped; the next one ends by itself.
const fenceScript = `#PBS -N fence
#PBS -j oe
log="$PBS_O_WORKDIR/fence.log"
node=$(head -n 1 "$PBS_NODEFILE")
now() { cut -d ' ' -f 1 /proc/uptime; }
echo "start $node $(now) $SHARQ_RESTART_COUNT" >> "$log"
if [ "$SHARQ_RESTART_COUNT" != 0 ]; then
  sleep 1
  echo "end $node $(now) $SHARQ_RESTART_COUNT" >> "$log"
  exit 0
fi
trap 'echo "term $node $(now) $SHARQ_RESTART_COUNT" >> "$log"; exit 143' TERM
while :; do sleep 0.1; done
`

// fenceEvent is one line of fence.log.
type fenceEvent struct {
	what, node string
	at         float64
	run        string
}

func fenceEvents(t *testing.T, log string) []fenceEvent {
	t.Helper()
	var out []fenceEvent
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 {
			t.Fatalf("fence.log line %q", l)
		}
		at, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("fence.log line %q: %v", l, err)
		}
		out = append(out, fenceEvent{f[0], f[1], at, f[3]})
	}
	return out
}

// TestPartitionFence: the node running a job is cut off from the network
// (its link taken down inside its namespace). The controller marks it down
// at node_timeout but keeps the job running (NodeUnreachable) until the
// node's job lease has run out; the node stops the job (SIGTERM) before
// that; only then does the job start on the other node. When the link
// comes back the node reconnects, reports the run it stopped, and removes
// its container: the job ran once at a time, and finished once.
func TestPartitionFence(t *testing.T) {
	c := newMHClusterTimed(t, fenceTiming)
	c.script("fence.sh", fenceScript)
	id := c.qsub("-q", "a", "fence.sh")
	var first string
	c.eventually(time.Minute, func() (bool, string) {
		j := c.job(id)
		if j.State == api.StateRunning && len(j.Allocs) == 1 && strings.HasPrefix(c.read("fence.log"), "start ") {
			first = j.Allocs[0].Node
			return true, ""
		}
		return false, fmt.Sprintf("%s %q", j.State, c.read("fence.log"))
	})
	other := map[string]string{"n1": "n2", "n2": "n1"}[first]

	// Cut the job's node off: its only link goes down.
	host := c.lab.hosts[first]
	c.lab.ip("-n", host.NS, "link", "set", "eth0", "down")
	linkUp := false
	defer func() {
		if !linkUp {
			exec.Command("ip", "-n", host.NS, "link", "set", "eth0", "up").Run()
		}
	}()

	// Down, and the job still there as running, for a while.
	c.eventually(time.Minute, func() (bool, string) {
		j := c.job(id)
		return j.State == api.StateRunning && j.Reason == api.ReasonNodeUnreachable && !j.RequeueAt.IsZero(),
			fmt.Sprintf("%s %q %v", j.State, j.Reason, j.RequeueAt)
	})
	// Requeued once the lease has run out, and finished on the other node.
	j := c.waitFinished(id, 2*time.Minute)
	if j.ExitStatus == nil || *j.ExitStatus != 0 || j.NodeFailures != 1 || j.Runs != 2 {
		t.Fatalf("job %+v: want exit 0 after 2 runs, one node failure", j)
	}
	ev := fenceEvents(t, c.read("fence.log"))
	want := []string{"start " + first + " 0", "term " + first + " 0", "start " + other + " 1", "end " + other + " 1"}
	var got []string
	for _, e := range ev {
		got = append(got, e.what+" "+e.node+" "+e.run)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("fence.log: %q, want %q", got, want)
	}
	if ev[2].at <= ev[1].at {
		t.Errorf("the second run started at %.2f, before the first one was stopped at %.2f", ev[2].at, ev[1].at)
	}
	t.Logf("first run stopped %.2fs after its start, the second started %.2fs after that", ev[1].at-ev[0].at, ev[2].at-ev[1].at)

	// The cut-off node's container ended (it is kept, exited, until the
	// controller has heard of it).
	rt := c.nodeRuntime(first)
	if task, ok := findTask(t, rt, id); ok && task.Running {
		t.Errorf("the cut-off node still runs the job's container: %+v", task)
	}

	// The link comes back: the node says hello, reports the run its lease
	// stopped, and is told to remove its container.
	c.lab.ip("-n", host.NS, "link", "set", "eth0", "up")
	linkUp = true
	c.eventually(2*time.Minute, func() (bool, string) {
		resp, err := c.call(api.Request{Op: api.OpNodes})
		if err != nil {
			return false, err.Error()
		}
		for _, n := range resp.Nodes {
			if n.Name == first {
				return n.State == "up", n.State
			}
		}
		return false, "no " + first
	})
	c.eventually(time.Minute, func() (bool, string) {
		_, ok := findTask(t, rt, id)
		return !ok && strings.Contains(c.logs.String(), "job lease ran out; the job was requeued meanwhile"), "container still there"
	})
	if j := c.job(id); j.Runs != 2 || j.State != api.StateFinished {
		t.Errorf("after the node came back: %s after %d runs", j.State, j.Runs)
	}
	if n := strings.Count(c.read("fence.log"), "start "); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
}

// nodeRuntime opens node host's containerd as its sharqd does.
func (c *mhCluster) nodeRuntime(host string) runtime.Runtime {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := c.runtimes[host]
	rt, err := containerd.NewContainerd(ctx, r[0], r[1], containerd.WithNode(host), containerd.WithLazyDaemon())
	must(c.t, err)
	c.t.Cleanup(func() { rt.Close() })
	return rt
}

// findTask is the job's container on rt, if any.
func findTask(t *testing.T, rt runtime.Runtime, id string) (runtime.Task, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tasks, err := rt.List(ctx)
	must(t, err)
	for _, task := range tasks {
		if task.JobID == id {
			return task, true
		}
	}
	return runtime.Task{}, false
}
