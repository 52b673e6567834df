package ctld

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// nvmlInventory is a node's inventory of n GPUs found by NVML.
func nvmlInventory(n int) *api.Inventory {
	inv := &api.Inventory{Source: "nvml", CPUs: 8}
	for i := range n {
		inv.GPUs = append(inv.GPUs, api.GPU{Index: i, Device: "/dev/nvidia" + string(rune('0'+i))})
	}
	return inv
}

// gaugeValue reads one series of a gauge of the controller's metrics.
func gaugeValue(t *testing.T, c *Controller, name, label, value string) float64 {
	t.Helper()
	mfs, err := c.met.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no metric %s{%s=%q}", name, label, value)
	return 0
}

// A GPU with a fatal Xid is fenced from the heartbeat that reports it: the
// job on it is stopped and requeued without a failure counted, and runs
// again on a healthy GPU; a GPU with a non-fatal fault is fenced while its
// job goes on; show nodes and the metric say so; an admin's resume clears
// them, and a fault the node reports after that fences again.
func TestSickGPUFenced(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNodeWith("n1", nvmlInventory(8))
	a := tc.submit("a", 1, nil)
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != a || !slices.Equal(st.GPUs, []int{0}) {
		t.Fatalf("start %+v", st)
	}
	n.report(a, 0, api.RunRunning, 0)
	b := tc.submit("a", 1, nil)
	st = n.expect(api.MsgStart).Start
	if st.Job.ID != b || !slices.Equal(st.GPUs, []int{1}) {
		t.Fatalf("start %+v", st)
	}
	n.report(b, 0, api.RunRunning, 0)
	tc.waitState(b, api.StateRunning)

	t0 := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
	xid := api.GPUFault{Index: 0, UUID: "GPU-0", Kind: api.GPUFaultXid, Xid: 79, Reason: "Xid 79: GPU has fallen off the bus", Fatal: true, Time: t0}
	remap := api.GPUFault{Index: 1, Kind: api.GPUFaultRowRemap, Reason: "row remapping failed", Time: t0}
	bogus := []api.GPUFault{{Index: 8, Kind: api.GPUFaultLost, Time: t0}, {Index: -1, Kind: api.GPUFaultLost, Time: t0}}
	faults := append([]api.GPUFault{xid, remap}, bogus...)
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUFaults: faults})
	stop := n.expect(api.MsgStop).Stop
	if stop.JobID != a || stop.Reason != api.StopRerun {
		t.Fatalf("stop %+v, want %s stopped to run again", stop, a)
	}
	n.report(a, 0, api.RunExited, 143)
	n.expect(api.MsgRemove)
	// a runs again, on the one healthy free GPU; b goes on.
	st = n.expect(api.MsgStart).Start
	if st.Job.ID != a || st.Run != 1 || len(st.GPUs) != 1 || st.GPUs[0] < 2 {
		t.Fatalf("restart %+v, want a on a healthy GPU", st)
	}
	n.report(a, 1, api.RunRunning, 0)
	j := tc.waitState(a, api.StateRunning)
	if j.Preemptions != 0 || j.NodeFailures != 0 || j.StartFailures != 0 {
		t.Errorf("a counted a failure: %d preemptions, %d node failures, %d start failures", j.Preemptions, j.NodeFailures, j.StartFailures)
	}
	if !slices.ContainsFunc(j.History, func(h api.HistoryEntry) bool {
		return strings.Contains(h.What, "GPU 0 of n1 unhealthy: Xid 79: GPU has fallen off the bus") && strings.Contains(h.What, "not counted")
	}) {
		t.Errorf("a's history does not tell of the GPU: %+v", j.History)
	}
	// Its requeue tells the fault, not qrerun.
	if !slices.ContainsFunc(j.History, func(h api.HistoryEntry) bool {
		return h.What == "requeued: rerun: GPU 0 of n1 unhealthy: Xid 79: GPU has fallen off the bus, exit status 143"
	}) {
		t.Errorf("a's requeue does not tell of the GPU: %+v", j.History)
	}
	if jb := tc.job(b); jb.State != api.StateRunning || !slices.ContainsFunc(jb.History, func(h api.HistoryEntry) bool {
		return strings.Contains(h.What, "GPU 1 of n1 unhealthy: row remapping failed; the job goes on")
	}) {
		t.Errorf("b: %s, history %+v", jb.State, jb.History)
	}
	// Five GPUs are left and healthy: a 4-GPU job runs there, a 2-GPU
	// job waits.
	c := tc.submit("b", 4, nil)
	st = n.expect(api.MsgStart).Start
	if st.Job.ID != c || slices.Contains(st.GPUs, 0) || slices.Contains(st.GPUs, 1) {
		t.Fatalf("start %+v on a fenced GPU", st)
	}
	d := tc.submit("b", 2, nil)
	n.quiet(300 * time.Millisecond)

	nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes
	if len(nodes) != 1 || nodes[0].State != "up" || len(nodes[0].UnhealthyGPUs) != 2 ||
		!slices.ContainsFunc(nodes[0].Problems, func(p string) bool {
			return strings.HasPrefix(p, "GPU 0 unhealthy since "+t0.Format(time.RFC3339)+": Xid 79: GPU has fallen off the bus (GPU-0)")
		}) {
		t.Fatalf("show nodes: %+v", nodes)
	}
	if v := gaugeValue(t, tc.ctl, "sharq_node_unhealthy_gpus", "node", "n1"); v != 2 {
		t.Errorf("sharq_node_unhealthy_gpus = %v, want 2", v)
	}

	// Reported again (every heartbeat does): nothing new happens.
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUFaults: faults})
	n.quiet(200 * time.Millisecond)

	// The admin resets the GPUs and resumes the node: d gets GPU 0 or 1.
	if resp := tc.call(api.Request{Op: api.OpResume, Node: "n1"}); resp.Error != nil {
		t.Fatalf("resume: %v", resp.Error)
	}
	st = n.expect(api.MsgStart).Start
	if st.Job.ID != d || !slices.Contains(st.GPUs, 0) && !slices.Contains(st.GPUs, 1) {
		t.Fatalf("start after the resume %+v", st)
	}
	if v := gaugeValue(t, tc.ctl, "sharq_node_unhealthy_gpus", "node", "n1"); v != 0 {
		t.Errorf("sharq_node_unhealthy_gpus = %v after the resume", v)
	}
	// The node still reports the cleared faults: they stay cleared. A new
	// one fences again.
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUFaults: faults})
	later := api.GPUFault{Index: 0, Kind: api.GPUFaultECC, Reason: "double-bit ECC error", Time: t0.Add(time.Second)}
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUFaults: append(faults, later)})
	for deadline := time.Now().Add(testWait); ; {
		nodes = tc.call(api.Request{Op: api.OpNodes}).Nodes
		if len(nodes[0].UnhealthyGPUs) == 1 && nodes[0].UnhealthyGPUs[0].Kind == api.GPUFaultECC {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("show nodes after a new fault: %+v", nodes[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A running job's GPU use comes with its node's heartbeats and shows on
// the job; reports of jobs the node does not run or of old runs are
// ignored, values out of range clamped; sharq_share_idle_gpus counts an
// idle job's GPUs, and the use stays on the job once it ended.
func TestGPUUseReported(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n1 := tc.attachNodeWith("n1", nvmlInventory(8))
	a := tc.submit("a", 2, nil)
	st := n1.expect(api.MsgStart).Start
	n1.report(a, st.Run, api.RunRunning, 0)
	b := tc.submit("a", 1, nil)
	stb := n1.expect(api.MsgStart).Start
	n1.report(b, stb.Run, api.RunRunning, 0)
	tc.waitState(b, api.StateRunning)
	awaitUse := func(id string) api.Job {
		t.Helper()
		for deadline := time.Now().Add(testWait); ; {
			if j := tc.job(id); j.GPUUse != nil {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("no GPU use on %s", id)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	use := api.GPUUse{Samples: 4, MeanUtil: 250, RecentUtil: 1, MemBytes: 3 << 30, PeakMemBytes: 1 << 30, IdleSamples: 9}
	busy := api.GPUUse{Samples: 1, MeanUtil: 90, RecentUtil: 90, RecentMaxUtil: 90}
	// Run 5 is not a's run, 99.x no job of n1's: with b's, in one message.
	n1.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUUse: []api.JobGPUUse{
		{JobID: a, Run: 5, GPUUse: use}, {JobID: "99.x", GPUUse: use}, {JobID: b, GPUUse: busy}}})
	if j := awaitUse(b); *j.GPUUse != busy {
		t.Errorf("b's use %+v, want %+v", *j.GPUUse, busy)
	}
	if j := tc.job(a); j.GPUUse != nil {
		t.Fatalf("use from reports that are not a's: %+v", j.GPUUse)
	}
	n1.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUUse: []api.JobGPUUse{{JobID: a, Run: 0, GPUUse: use}, {JobID: b, GPUUse: busy}}})
	want := api.GPUUse{Samples: 4, MeanUtil: 100, RecentUtil: 1, RecentMaxUtil: 1, MemBytes: 3 << 30, PeakMemBytes: 3 << 30, IdleSamples: 4}
	if j := awaitUse(a); *j.GPUUse != want {
		t.Errorf("a's use %+v, want %+v", *j.GPUUse, want)
	}
	if err := tc.ctl.do(context.Background(), tc.ctl.updateIdleMetrics); err != nil {
		t.Fatal(err)
	}
	if v := gaugeValue(t, tc.ctl, "sharq_share_idle_gpus", "share", "a"); v != 2 {
		t.Errorf("sharq_share_idle_gpus{share=a} = %v, want a's 2 GPUs", v)
	}
	if v := gaugeValue(t, tc.ctl, "sharq_share_idle_gpus", "share", "b"); v != 0 {
		t.Errorf("sharq_share_idle_gpus{share=b} = %v, want 0", v)
	}
	n1.report(a, st.Run, api.RunExited, 0)
	if j := tc.waitState(a, api.StateFinished); j.GPUUse == nil || *j.GPUUse != want {
		t.Errorf("finished job's use: %+v", j.GPUUse)
	}
}

// The idle policy end to end on the controller: of 8 jobs of a borrowing
// share, the one whose GPUs stayed below the threshold for idle_after is
// marked IdleGPUs and is the one the owner's reclaim preempts (without
// the mark it would be the most recently started).
func TestIdleBorrowerReclaimed(t *testing.T) {
	tc := prepareTestCluster(t, []string{"n1:8"}, twoShares, "", Limits{})
	b, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "max_walltime = \"1h\"\n", "max_walltime = \"1h\"\nidle_after = \"10m\"\nidle_threshold = 5\n", 1)
	if err := os.WriteFile(tc.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tc.start()
	t.Cleanup(tc.stop)
	n := tc.attachNodeWith("n1", nvmlInventory(8))
	var ids []string
	for range 8 {
		id := tc.submit("b", 1, nil)
		st := n.expect(api.MsgStart).Start
		n.report(st.Job.ID, st.Run, api.RunRunning, 0)
		tc.waitState(st.Job.ID, api.StateRunning)
		ids = append(ids, id)
	}
	idle := ids[1]
	report := func() {
		var use []api.JobGPUUse
		for _, id := range ids {
			u := api.GPUUse{Samples: 3, MeanUtil: 90, RecentUtil: 90, RecentMaxUtil: 95}
			if id == idle {
				u = api.GPUUse{Samples: 3, MeanUtil: 1, RecentUtil: 1, RecentMaxUtil: 4}
			}
			use = append(use, api.JobGPUUse{JobID: id, GPUUse: u})
		}
		n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUUse: use})
	}
	// Heard every 4 minutes (node_timeout is 10): idle from the first
	// report on, for 12 minutes by the last.
	for range 4 {
		since := tc.clock.now()
		report()
		tc.heard("n1", since)
		tc.advance(4 * time.Minute)
	}
	for deadline := time.Now().Add(testWait); ; {
		j := tc.job(idle)
		if slices.ContainsFunc(j.History, func(h api.HistoryEntry) bool {
			return strings.HasPrefix(h.What, "IdleGPUs: its GPUs stayed below 5% use for 10m0s")
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not marked idle: %+v", idle, j.History)
		}
		time.Sleep(10 * time.Millisecond)
	}
	tc.submit("a", 1, nil)
	if stop := n.expect(api.MsgStop).Stop; stop.JobID != idle || stop.Reason != api.StopPreempted {
		t.Fatalf("stop %+v, want the idle %s preempted", stop, idle)
	}
}

// A finished job's history record keeps its last run's sampled GPU use:
// mean utilization, peak memory, and its GPU-seconds split by the share
// of idle samples and weighted by the utilization; a job never sampled
// has none.
func TestHistoryRecordGPUUse(t *testing.T) {
	j := api.Job{ID: "5.t", EndTime: time.Unix(1000, 0), Share: "a", Partition: "gpu"}
	if r := historyRecord(&j); r.SampledGPUSeconds != 0 || r.GPUMeanUtil != 0 || r.Validate() != nil {
		t.Errorf("unsampled: %+v (%v)", r, r.Validate())
	}
	j.GPURun = api.SummarizeGPUUse(&api.GPUUse{Samples: 10, IdleSamples: 4, MeanUtil: 30, PeakMemBytes: 7 << 30}, 4000)
	r := historyRecord(&j)
	if r.GPUMeanUtil != 30 || r.GPUPeakMem != 7<<30 || r.SampledGPUSeconds != 4000 || r.IdleGPUSeconds != 1600 || r.UtilGPUSeconds != 1200 {
		t.Errorf("record %+v", r)
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
}
