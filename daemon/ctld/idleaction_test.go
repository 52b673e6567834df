package ctld

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// idleCluster is an 8-GPU node under twoShares whose partition has the
// idle policy (idle_after 10m) and the given extra keys, with jobs of
// share b of one GPU each running on it (the last one interactive if
// asked).
func idleCluster(t *testing.T, keys string, jobs int, interactive bool) (*testCluster, *scriptedNode, []string) {
	t.Helper()
	tc := prepareTestCluster(t, []string{"n1:8"}, twoShares, "", Limits{})
	b, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "max_walltime = \"1h\"\n", "max_walltime = \"1h\"\ninteractive = true\nidle_after = \"10m\"\n"+keys, 1)
	if err := os.WriteFile(tc.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tc.start()
	t.Cleanup(tc.stop)
	n := tc.attachNodeWith("n1", nvmlInventory(8))
	var ids []string
	for i := range jobs {
		spec := &api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "b", Command: []string{"true"}, WorkDir: "/tmp",
			Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, Interactive: interactive && i == jobs-1}}
		id := tc.submitSpec(spec)
		st := n.expect(api.MsgStart).Start
		n.report(st.Job.ID, st.Run, api.RunRunning, 0)
		tc.waitState(id, api.StateRunning)
		ids = append(ids, id)
	}
	return tc, n, ids
}

// idleFor has node n report job idle's GPUs below the threshold, the
// others' busy, every 4 minutes for 12 minutes of the controller's clock.
func idleFor(tc *testCluster, n *scriptedNode, ids []string, idle string) {
	tc.t.Helper()
	for range 4 {
		var use []api.JobGPUUse
		for _, id := range ids {
			u := api.GPUUse{Samples: 3, MeanUtil: 90, RecentUtil: 90, RecentMaxUtil: 95}
			if id == idle {
				u = api.GPUUse{Samples: 3, MeanUtil: 1, RecentUtil: 1, RecentMaxUtil: 4}
			}
			use = append(use, api.JobGPUUse{JobID: id, GPUUse: u})
		}
		since := tc.clock.now()
		n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUUse: use})
		tc.heard("n1", since)
		tc.advance(4 * time.Minute)
	}
}

func hasHistory(j api.Job, prefix string) bool {
	return slices.ContainsFunc(j.History, func(h api.HistoryEntry) bool { return strings.HasPrefix(h.What, prefix) })
}

// TestIdleAction: a partition's idle_action stops a job marked IdleGPUs
// only where it borrows (its share holds its GPUs beyond the quota), is
// interactive, or idle_action_in_quota says so; it requeues (not counted
// as a preemption, the history says why) or stops it for good, as a
// preemption does (SIGTERM, the grace). A job within its share's quota
// is only marked: qstat's Reason is IdleGPUs, its sessions are told.
func TestIdleAction(t *testing.T) {
	for _, c := range []struct {
		name        string
		keys        string
		jobs        int  // of share b, whose quota is 4
		interactive bool // the last job (the idle one) is interactive
		stop        api.StopReason
		notice      bool
		after       string    // an entry of the idle job's history, by prefix, once it exited
		state       api.State // finished, or "": back in the queue
	}{
		{name: "borrower requeued", keys: "idle_action = \"requeue\"\n", jobs: 6, stop: api.StopRerun,
			after: "requeued: rerun: its GPUs stayed below 5% use for 10m0s (IdleGPUs), exit status 143"},
		{name: "borrower stopped", keys: "idle_action = \"stop\"\n", jobs: 6, stop: api.StopDeleted, after: "finished", state: api.StateFinished},
		{name: "within quota only marked", keys: "idle_action = \"requeue\"\n", jobs: 4},
		{name: "no action only marked", jobs: 6},
		{name: "within quota by the admin's choice", keys: "idle_action = \"stop\"\nidle_action_in_quota = true\n", jobs: 2,
			stop: api.StopDeleted, after: "finished", state: api.StateFinished},
		{name: "interactive within quota stopped", keys: "idle_action = \"requeue\"\n", jobs: 2, interactive: true,
			stop: api.StopDeleted, notice: true, after: "finished", state: api.StateFinished},
		{name: "interactive only marked, told", jobs: 2, interactive: true, notice: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc, n, ids := idleCluster(t, c.keys, c.jobs, c.interactive)
			idle := ids[len(ids)-1]
			idleFor(tc, n, ids, idle)
			if c.notice {
				m := n.expect(api.MsgNotice).Notice
				if m.JobID != idle || m.Run != 0 || !strings.Contains(m.Text, "marked IdleGPUs") {
					t.Fatalf("notice %+v", m)
				}
			}
			if c.stop == "" {
				j := tc.job(idle)
				if j.State != api.StateRunning || j.Reason != api.ReasonIdleGPUs || !hasHistory(j, "IdleGPUs: its GPUs stayed below 5% use for 10m0s") {
					t.Fatalf("idle job: state %s, reason %q, history %+v", j.State, j.Reason, j.History)
				}
				// Any stop would have been sent before the mark: the
				// next order is the start of a new job.
				id := tc.submit("a", 1, nil)
				if st := n.expect(api.MsgStart).Start; st.Job.ID != id {
					t.Fatalf("start %+v, want %s", st, id)
				}
				// Busy again: the reason goes.
				since := tc.clock.now()
				n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUUse: []api.JobGPUUse{{JobID: idle, GPUUse: api.GPUUse{Samples: 4, MeanUtil: 50, RecentUtil: 80, RecentMaxUtil: 90}}}})
				tc.heard("n1", since)
				if j := tc.job(idle); j.Reason != "" || !hasHistory(j, "its GPUs are busy again") {
					t.Fatalf("busy again: reason %q, history %+v", j.Reason, j.History)
				}
				return
			}
			stop := n.expect(api.MsgStop).Stop
			if stop.JobID != idle || stop.Reason != c.stop || stop.Grace != 7*time.Second {
				t.Fatalf("stop %+v, want %s of %s with the 7s grace", stop, c.stop, idle)
			}
			n.report(idle, 0, api.RunExited, 143)
			// A requeued job may start again at once: its history tells.
			j := tc.job(idle)
			for deadline := time.Now().Add(testWait); !hasHistory(j, c.after); j = tc.job(idle) {
				if time.Now().After(deadline) {
					t.Fatalf("no history entry %q: %+v", c.after, j.History)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if c.state == api.StateFinished && j.State != c.state {
				t.Errorf("state %s, want %s", j.State, c.state)
			}
			if j.Preemptions != 0 {
				t.Errorf("preemptions %d, want 0", j.Preemptions)
			}
		})
	}
}

// An IdleGPUs mark spooled with the job does not outlive a controller
// restart as a stale Reason: the restarted controller, whose core has no
// mark, takes it back at the job's first report as busy.
func TestIdleReasonAfterRestart(t *testing.T) {
	tc, n, ids := idleCluster(t, "", 2, false)
	idle := ids[1]
	idleFor(tc, n, ids, idle)
	if j := tc.job(idle); j.Reason != api.ReasonIdleGPUs {
		t.Fatalf("reason %q, want %s", j.Reason, api.ReasonIdleGPUs)
	}
	tc.restart()
	if j := tc.job(idle); j.Reason != api.ReasonIdleGPUs {
		t.Fatalf("reason after the restart %q, want the spooled %s", j.Reason, api.ReasonIdleGPUs)
	}
	n = tc.attachNodeWith("n1", nvmlInventory(8), api.RunningJob{JobID: ids[0]}, api.RunningJob{JobID: idle})
	since := tc.clock.now()
	n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1", GPUUse: []api.JobGPUUse{{JobID: idle, GPUUse: api.GPUUse{Samples: 1, MeanUtil: 80, RecentUtil: 80, RecentMaxUtil: 80}}}})
	tc.heard("n1", since)
	if j := tc.job(idle); j.Reason != "" || j.State != api.StateRunning {
		t.Fatalf("busy after the restart: %s, reason %q", j.State, j.Reason)
	}
}
