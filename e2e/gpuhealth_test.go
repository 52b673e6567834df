//go:build !unit

package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The GPUs' health and use, through sharqd's fake GPU source
// (runtime/gpu/fake.go): a test writes each node's GPU state file, sharqd
// reads it every gpu_sample_interval as it would read NVML.

// gpuJobScript prints the job's GPUs and runs until it is stopped.
const gpuJobScript = "echo CVD=$CUDA_VISIBLE_DEVICES\nwhile true; do sleep 1; done\n"

// jobGPUs waits for the job's output to name its GPUs and returns those
// of its last run.
func (c *cluster) jobGPUs(id, name string) []string {
	c.t.Helper()
	out := name + ".o" + strings.TrimSuffix(id, ".e2e")
	var gpus []string
	c.eventually(time.Minute, func() (bool, string) {
		s := c.readFile(out)
		i := strings.LastIndex(s, "CVD=")
		if i < 0 {
			return false, id + " output: " + s
		}
		line, _, ok := strings.Cut(s[i+len("CVD="):], "\n")
		gpus = strings.Split(line, ",")
		return ok && line != "", id + " output: " + s
	})
	return gpus
}

// fakeUtil is a fake state file of 8 GPUs, each at its percent of util
// (by index; "*": any other).
func fakeUtil(util map[string]int) string {
	var parts []string
	for i := 0; i < 8; i++ {
		u, ok := util[fmt.Sprint(i)]
		if !ok {
			u = util["*"]
		}
		parts = append(parts, fmt.Sprintf(`{"index": %d, "util": %d, "mem_used": 1073741824}`, i, u))
	}
	return `{"gpus": [` + strings.Join(parts, ", ") + `]}`
}

func TestFakeGPUHealthAndIdleReclaim(t *testing.T) {
	t.Run("sick GPU fenced", func(t *testing.T) {
		c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares, fakeGPUs: true,
			runtime: `gpu_sample_interval = "1s"`})
		c.script("hold.sh", gpuJobScript)
		c.script("one.sh", "echo CVD=$CUDA_VISIBLE_DEVICES\n")
		// Four 2-GPU jobs take the node's 8 GPUs; one of them holds GPU 1.
		var ids []string
		for i := 0; i < 4; i++ {
			ids = append(ids, c.qsub("-q", "b", "-N", fmt.Sprintf("h%d", i), "-l", "ngpus=2", "hold.sh"))
		}
		sick, sickName, other := "", "", ""
		for i, id := range ids {
			c.waitState(id, "R", time.Minute)
			gpus := c.jobGPUs(id, fmt.Sprintf("h%d", i))
			if slices.Contains(gpus, "1") {
				sick, sickName = id, fmt.Sprintf("h%d", i)
				other = gpus[0]
				if other == "1" {
					other = gpus[1]
				}
			}
		}
		if sick == "" {
			t.Fatal("no job got GPU 1")
		}
		c.setGPUs("n1", `{"gpus": [{"index": 1, "util": 90, "faults": [{"xid": 79}]}]}`)
		// The job on GPU 1 is stopped and requeued, not counted as a failure.
		c.eventually(time.Minute, func() (bool, string) {
			full, _, _ := c.runAs(0, "qstat", "-f", "-x", sick)
			return c.state(sick) == "Q" && strings.Contains(full, "requeued: rerun: GPU 1 of n1 unhealthy: Xid 79: GPU has fallen off the bus"), full
		})
		full, _, _ := c.runAs(0, "qstat", "-f", "-x", sick)
		if !strings.Contains(full, "not counted") || c.field(sick, "preemption_count") != "0" ||
			!slices.Contains([]string{"", "0"}, c.field(sick, "node_failure_count")) {
			t.Fatalf("the requeue counted against the job:\n%s", full)
		}
		nodes, _, err := c.runAs(0, "sharqctl", "show", "nodes")
		if err != nil || !strings.Contains(nodes, "GPU 1 unhealthy since ") || !strings.Contains(nodes, "Xid 79: GPU has fallen off the bus") {
			t.Fatalf("sharqctl show nodes (%v):\n%s", err, nodes)
		}
		// GPU 1 and its partner are free; GPU 1 is fenced: a 1-GPU job
		// gets the partner, and the requeued 2-GPU job cannot run.
		// It asks for a short walltime: backfill lets it go ahead of the
		// requeued job, whose estimated start is when the others end.
		one := c.qsub("-q", "b", "-N", "one", "-l", "ngpus=1", "-l", "walltime=00:02:00", "one.sh")
		c.waitState(one, "F", time.Minute)
		if got := c.jobGPUs(one, "one"); !slices.Equal(got, []string{other}) {
			t.Fatalf("the 1-GPU job got GPUs %v, want the healthy free one %s", got, other)
		}
		if st := c.state(sick); st != "Q" {
			t.Fatalf("the requeued job is %s with only one healthy free GPU", st)
		}
		for _, id := range ids {
			if id != sick && c.state(id) != "R" {
				t.Fatalf("job %s on a healthy GPU is %s", id, c.state(id))
			}
		}
		// An admin clears the fence after a reset: the requeued job runs,
		// on GPU 1 again.
		if _, errOut, err := c.runAs(0, "sharqctl", "node", "resume", "n1"); err != nil {
			t.Fatalf("sharqctl node resume: %v %s", err, errOut)
		}
		c.waitState(sick, "R", time.Minute)
		c.eventually(time.Minute, func() (bool, string) {
			s := c.readFile(sickName + ".o" + strings.TrimSuffix(sick, ".e2e"))
			return strings.Count(s, "CVD=") == 2, s
		})
		if got := c.jobGPUs(sick, sickName); !slices.Contains(got, "1") {
			t.Fatalf("after resume the requeued job got GPUs %v, want GPU 1 among them", got)
		}
		if n := c.field(sick, "run_count"); n != "2" {
			t.Fatalf("run_count %q", n)
		}
	})

	t.Run("idle borrower reclaimed first", func(t *testing.T) {
		// Share b's quota is 2 GPUs: its two 3-GPU jobs both borrow from
		// a, which lends its 6 while idle.
		shares := `
[[share]]
name = "a"
partition = "gpu"
gpus = 6
strategy = "LEND"
users = ["*"]

[[share]]
name = "b"
partition = "gpu"
gpus = 2
strategy = "LEND_AND_BORROW"
borrow_limit = -1
users = ["*"]
`
		c := newCluster(t, spec{nodes: []string{"n1"}, shares: shares, fakeGPUs: true,
			runtime: `gpu_sample_interval = "1s"`, part: `idle_after = "1m"`})
		c.setGPUs("n1", fakeUtil(map[string]int{"*": 90}))
		c.script("hold.sh", gpuJobScript)
		c.script("owner.sh", "echo CVD=$CUDA_VISIBLE_DEVICES\n")
		// The idle job starts first: without the idle mark, a reclaim
		// takes the job that started last (the busy one).
		idle := c.qsub("-q", "b", "-N", "idle", "-l", "ngpus=3", "hold.sh")
		c.waitState(idle, "R", time.Minute)
		idleGPUs := c.jobGPUs(idle, "idle")
		busy := c.qsub("-q", "b", "-N", "busy", "-l", "ngpus=3", "hold.sh")
		c.waitState(busy, "R", time.Minute)
		busyGPUs := c.jobGPUs(busy, "busy")
		util := map[string]int{"*": 90}
		for _, g := range idleGPUs {
			util[g] = 0
		}
		c.setGPUs("n1", fakeUtil(util))
		c.eventually(3*time.Minute, func() (bool, string) {
			return c.field(idle, "comment") == "IdleGPUs", idle + " comment " + c.field(idle, "comment")
		})
		if got := c.field(busy, "comment"); got == "IdleGPUs" {
			t.Fatalf("the busy job is marked idle")
		}
		// a's owner job needs 3 GPUs: 2 are free, one borrower must go.
		owner := c.qsub("-q", "a", "-N", "owner", "-l", "ngpus=3", "owner.sh")
		c.waitState(owner, "F", 2*time.Minute)
		if n := c.field(idle, "preemption_count"); n != "1" {
			full, _, _ := c.runAs(0, "qstat", "-f", "-x", idle)
			t.Fatalf("idle job preemption_count %q:\n%s", n, full)
		}
		if st, n := c.state(busy), c.field(busy, "preemption_count"); st != "R" || n != "0" {
			t.Fatalf("busy job %s, preemption_count %s", st, n)
		}
		ownerGPUs := c.jobGPUs(owner, "owner")
		for _, g := range ownerGPUs {
			if slices.Contains(busyGPUs, g) {
				t.Fatalf("owner got GPUs %v, the busy job holds %v", ownerGPUs, busyGPUs)
			}
		}
	})
}
