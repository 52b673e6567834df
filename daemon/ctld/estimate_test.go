package ctld

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

const oneReserveShare = `
[[share]]
name = "a"
partition = "gpu"
gpus = 8
strategy = "RESERVE"
users = ["*"]
`

// TestQstatShowsEstimate: the core's reservation for a blocked job reaches
// qstat -f (estimated.start_time, estimated.exec_vnode), qstat -T and
// qstat -f -F json, through the real controller and command line.
func TestQstatShowsEstimate(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:4", "n2:4"}, oneReserveShare)
	n1, n2 := tc.attachNode("n1"), tc.attachNode("n2")
	submit := func(gpus int, wall time.Duration) string {
		return tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
			Resources: api.Resources{Nodes: 1, GPUsPerNode: gpus, Walltime: wall}}})
	}
	long := submit(3, 30*time.Minute)
	n1.expect(api.MsgStart)
	short := submit(3, 20*time.Minute)
	n2.expect(api.MsgStart)
	started := tc.job(short).StartTime
	// One GPU free on each node: the 2-GPU job fits its quota but no node.
	big := submit(2, 10*time.Minute)
	var j api.Job
	for deadline := time.Now().Add(testWait); ; time.Sleep(10 * time.Millisecond) {
		if j = tc.job(big); j.Estimated != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: no estimate (state %s, reason %q)", big, j.State, j.Reason)
		}
	}
	// n2 frees first: when the 20-minute job's walltime ends.
	if want := started.Add(20 * time.Minute); !j.Estimated.StartTime.Equal(want) || len(j.Estimated.Allocs) != 1 || j.Estimated.Allocs[0].Node != "n2" {
		t.Fatalf("estimate %+v, want n2 at %v", j.Estimated, want)
	}
	if j.Reason != "Fragmented" {
		t.Errorf("reason %q, want Fragmented", j.Reason)
	}
	if e := tc.job(long).Estimated; e != nil {
		t.Errorf("running job %s has an estimate %+v", long, e)
	}

	full, _ := tc.qstatAs(nil, "-f", big)
	want := "    estimated.start_time = " + j.Estimated.StartTime.UTC().Format("Mon Jan _2 15:04:05 2006") + "\n"
	if !strings.Contains(full, "    estimated.exec_vnode = (n2:ncpus=1:ngpus=2)\n") || !strings.Contains(full, want) {
		t.Errorf("qstat -f lacks the estimate (want %q):\n%s", want, full)
	}
	if other, _ := tc.qstatAs(nil, "-f", long); strings.Contains(other, "estimated.") {
		t.Errorf("qstat -f of a running job shows an estimate:\n%s", other)
	}

	table, _ := tc.qstatAs(nil, "-T")
	if rows(table, long) != 0 || rows(table, short) != 0 || rows(table, big) != 1 {
		t.Fatalf("qstat -T lists running jobs or misses the pending one:\n%s", table)
	}
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, strings.SplitN(big, ".", 2)[0]+".") && (strings.Contains(line, "--") || !strings.Contains(line, "Fragmented")) {
			t.Errorf("qstat -T row without an estimate: %q", line)
		}
	}

	raw, _ := tc.qstatAs(nil, "-f", "-F", "sharq-json", big)
	var doc struct {
		Jobs map[string]struct {
			Estimated *api.Estimated `json:"estimated"`
		} `json:"Jobs"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatalf("qstat -f -F json: %v\n%s", err, raw)
	}
	if e := doc.Jobs[big].Estimated; e == nil || !e.StartTime.Equal(j.Estimated.StartTime) || len(e.Allocs) != 1 || e.Allocs[0].Node != "n2" {
		t.Errorf("JSON estimate %+v, want %+v", e, j.Estimated)
	}

	// qalter -l walltime reaches the core, which plans with it.
	wall := 5 * time.Minute
	if resp := callAs(tc.ctl, alice, api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: big, Walltime: &wall}}); resp.Error != nil {
		t.Fatalf("qalter: %v", resp.Error)
	}
	var coreWall time.Duration
	if err := tc.ctl.do(bgctx, func() {
		info, _ := tc.ctl.core.Job(sched.JobID(big))
		coreWall = info.Job.Walltime
	}); err != nil || coreWall != wall {
		t.Errorf("core walltime %v (%v), want %v", coreWall, err, wall)
	}
}
