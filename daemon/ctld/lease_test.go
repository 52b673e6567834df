package ctld

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// leaseKeys is the [cluster] job_lease of the lease tests: longer than the
// harness's node_timeout (10m).
const (
	leaseKeys   = "job_lease = \"15m\"\n"
	testLease   = 15 * time.Minute
	leaseMargin = 2 * time.Second // the harness's heartbeat_interval (1s) and a second
)

// runningOn submits a job of gpus GPUs to share a, which node n (named
// name) must start, and has n report it running.
func (tc *testCluster) runningOn(n *scriptedNode, name string, gpus int) string {
	tc.t.Helper()
	id := tc.submit("a", gpus, nil)
	m := n.expect(api.MsgStart)
	if m.Start.Job.ID != id {
		tc.t.Fatalf("%s started %s, want %s", name, m.Start.Job.ID, id)
	}
	n.report(id, m.Start.Run, api.RunRunning, 0)
	tc.waitHistory(id, "container started on "+name)
	return id
}

// restartedAt restarts the controller and returns when the new one
// started, on its clock.
func (tc *testCluster) restartedAt() time.Time {
	tc.t.Helper()
	tc.restart()
	var started time.Time
	if err := tc.ctl.do(context.Background(), func() { started = tc.ctl.startedAt }); err != nil {
		tc.t.Fatal(err)
	}
	return started
}

// requeuedAt moves the clock to a second before at, when job id must still
// be running, then past it, when node n (beating all along) must be sent
// it again; it returns that start order.
func (tc *testCluster) requeuedAt(id string, at time.Time, n *scriptedNode) api.NodeMsg {
	tc.t.Helper()
	tc.advanceBeating(at.Sub(tc.clock.now())-time.Second, n)
	if j := tc.job(id); j.State != api.StateRunning {
		tc.t.Fatalf("before its lease's end: job %s is %s", id, j.State)
	}
	tc.advanceBeating(2*time.Second, n)
	m := n.expect(api.MsgStart)
	if m.Start.Job.ID != id {
		tc.t.Fatalf("started %s, want %s again", m.Start.Job.ID, id)
	}
	return m
}

// advanceBeating moves the clock d ahead in steps shorter than
// node_timeout, the given nodes beating before each, so that only the
// others fall silent.
func (tc *testCluster) advanceBeating(d time.Duration, beating ...*scriptedNode) {
	tc.t.Helper()
	for d > 0 {
		step := min(d, testNodeTimeout/2)
		for _, n := range beating {
			beat := tc.clock.now()
			n.send(api.NodeMsg{Type: api.MsgHeartbeat})
			tc.heard(n.name, beat)
		}
		tc.advance(step)
		d -= step
	}
}

// lastSeen is when the controller last heard from node name.
func (tc *testCluster) lastSeen(name string) time.Time {
	tc.t.Helper()
	var at time.Time
	if err := tc.ctl.do(context.Background(), func() { at = tc.ctl.nodes[name].lastSeen }); err != nil {
		tc.t.Fatal(err)
	}
	return at
}

// nodeState is node name's state in sharqctl show nodes.
func (tc *testCluster) nodeState(name string) string {
	tc.t.Helper()
	var st string
	if err := tc.ctl.do(context.Background(), func() {
		for _, n := range tc.ctl.nodeStatus() {
			if n.Name == name {
				st = n.State
			}
		}
	}); err != nil {
		tc.t.Fatal(err)
	}
	return st
}

// waitHistory waits until job id's history has an entry containing what.
func (tc *testCluster) waitHistory(id, what string) {
	tc.t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		for _, h := range tc.job(id).History {
			if strings.Contains(h.What, what) {
				return
			}
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("job %s: no %q in its history %+v", id, what, tc.job(id).History)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLeaseGranted: the welcome acknowledges the hello and every
// heartbeat of the node is acknowledged by one of the controller's, each
// granting job_lease.
func TestLeaseGranted(t *testing.T) {
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares, leaseKeys)
	n1 := tc.attachHello(api.NodeMsg{Node: "n1", Inventory: &api.Inventory{Source: "config", CPUs: 8}, Seq: 7})
	if w := n1.welcome; w.Ack != 7 || w.Lease != testLease {
		t.Fatalf("welcome acknowledges %d with lease %v, want 7 and %v", w.Ack, w.Lease, testLease)
	}
	n1.send(api.NodeMsg{Type: api.MsgHeartbeat, Seq: 8})
	select {
	case m := <-n1.acks:
		if m.Ack != 8 || m.Lease != testLease {
			t.Fatalf("heartbeat acknowledges %d with lease %v, want 8 and %v", m.Ack, m.Lease, testLease)
		}
	case <-time.After(testWait):
		t.Fatal("the heartbeat was not acknowledged")
	}
}

// TestSilentNodeLease: a node silent for node_timeout is down, but its
// job runs on (NodeUnreachable) until the node's job lease has surely run
// out; what happens then depends on the node.
func TestSilentNodeLease(t *testing.T) {
	cases := []struct {
		name string
		// back, if set, is the node's hello after node_timeout, before
		// the requeue time.
		back *api.RunningJob
		// wantRequeued: the job goes back to the queue (a node failure).
		wantRequeued bool
	}{
		{name: "still silent after the lease: requeued", wantRequeued: true},
		{name: "back in between with the job running: it keeps it", back: &api.RunningJob{Run: 0}},
		{name: "back in between, the job stopped by its lease: requeued",
			back: &api.RunningJob{Run: 0, Exited: true, ExitStatus: 256 + 15, Error: "lease", Stop: api.StopLease}, wantRequeued: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := newTestClusterWith(t, []string{"n1:8", "n2:8"}, twoShares, leaseKeys)
			n1 := tc.attachNode("n1")
			id := tc.runningOn(n1, "n1", 4)
			n2 := tc.attachNode("n2")
			seen := tc.lastSeen("n1")
			tc.advanceBeating(testNodeTimeout+time.Second, n2)
			j := tc.job(id)
			want := seen.Add(testLease + leaseMargin)
			if j.State != api.StateRunning || j.Reason != api.ReasonNodeUnreachable || !j.RequeueAt.Equal(want) {
				t.Fatalf("after node_timeout: state %s, reason %q, requeue at %v; want running, %s, %v",
					j.State, j.Reason, j.RequeueAt, api.ReasonNodeUnreachable, want)
			}
			if st := tc.nodeState("n1"); st != "down" {
				t.Fatalf("n1 is %s, want down", st)
			}
			// Just before the requeue time: nothing moves.
			tc.advanceBeating(want.Sub(tc.clock.now())-time.Second, n2)
			if j := tc.job(id); j.State != api.StateRunning || j.Runs != 1 {
				t.Fatalf("before the lease's end: state %s, runs %d", j.State, j.Runs)
			}
			beating := []*scriptedNode{n2}
			if c.back != nil {
				r := *c.back
				r.JobID = id
				n1 = tc.attachNode("n1", r)
				beating = append(beating, n1)
			}
			tc.advanceBeating(2*time.Second, beating...)
			j = tc.job(id)
			if !c.wantRequeued {
				if j.State != api.StateRunning || j.Reason != "" || !j.RequeueAt.IsZero() || j.Runs != 1 {
					t.Fatalf("node back: state %s, reason %q, requeue at %v, runs %d; want running on", j.State, j.Reason, j.RequeueAt, j.Runs)
				}
				tc.advanceBeating(testLease, beating...)
				if j := tc.job(id); j.State != api.StateRunning || j.Runs != 1 || j.NodeFailures != 0 {
					t.Fatalf("node back, a lease later: state %s, runs %d, node failures %d", j.State, j.Runs, j.NodeFailures)
				}
				if st := tc.nodeState("n1"); st != "up" {
					t.Fatalf("n1 is %s, want up", st)
				}
				return
			}
			// Requeued as a node failure, and started again (on n2, or on
			// n1 when it is back).
			deadline := time.Now().Add(testWait)
			for j = tc.job(id); j.Runs != 2; j = tc.job(id) {
				if time.Now().After(deadline) {
					t.Fatalf("not started again: state %s, runs %d", j.State, j.Runs)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if j.NodeFailures != 1 || j.Preemptions != 0 || j.ExitStatus != nil {
				t.Fatalf("requeued: node failures %d, preemptions %d, exit %v; want 1, 0, none", j.NodeFailures, j.Preemptions, j.ExitStatus)
			}
			if c.back == nil {
				if s := n2.expect(api.MsgStart); s.Start.Job.ID != id || s.Start.Run != 1 {
					t.Fatalf("restart: %+v", s.Start)
				}
			}
		})
	}
}

// TestRestartWaitsForLease: after a controller restart a node that ran
// jobs and does not say hello is down at node_timeout, and its jobs are
// requeued only a job lease after the restart (the controller before
// renewed the node's lease until it stopped).
func TestRestartWaitsForLease(t *testing.T) {
	tc := newTestClusterWith(t, []string{"n1:8", "n2:8"}, twoShares, leaseKeys)
	n1 := tc.attachNode("n1")
	id := tc.runningOn(n1, "n1", 4)
	started := tc.restartedAt()
	n2 := tc.attachNode("n2")
	tc.advanceBeating(testNodeTimeout+time.Second, n2)
	want := started.Add(testLease + leaseMargin)
	if j := tc.job(id); j.State != api.StateRunning || j.Reason != api.ReasonNodeUnreachable || !j.RequeueAt.Equal(want) {
		t.Fatalf("after node_timeout: state %s, reason %q, requeue at %v; want running, unreachable, %v", j.State, j.Reason, j.RequeueAt, want)
	}
	if s := tc.requeuedAt(id, want, n2); s.Start.Run != 1 {
		t.Fatalf("restart: %+v", s.Start)
	}
}

// TestLeaseShortenedByReload: a reload that shortens job_lease does not
// shorten the leases nodes already hold: a node silent since before it
// keeps its job until the old lease has run out from the reload.
func TestLeaseShortenedByReload(t *testing.T) {
	tc := newTestClusterWith(t, []string{"n1:8", "n2:8"}, twoShares, leaseKeys)
	n1 := tc.attachNode("n1")
	id := tc.submit("a", 4, nil)
	n1.expect(api.MsgStart)
	n2 := tc.attachNode("n2")
	var reloaded time.Time
	if err := tc.ctl.do(context.Background(), func() {
		reloaded = tc.ctl.now()
		tc.ctl.setJobLease(11 * time.Minute)
	}); err != nil {
		t.Fatal(err)
	}
	tc.advanceBeating(testNodeTimeout+time.Second, n2)
	want := reloaded.Add(testLease + leaseMargin)
	// The reload's own reading of the clock comes just after reloaded.
	if j := tc.job(id); j.RequeueAt.Before(want) || j.RequeueAt.After(want.Add(time.Second)) {
		t.Fatalf("requeue at %v, want the old lease's end %v", j.RequeueAt, want)
	}
}

// TestLeaseKeptAcrossRestart: job_lease shortened and the controller
// restarted at once: the longer lease the nodes may still hold is in the
// spool, and a silent node's job waits for it; once it has run out the
// spool holds the shorter one.
func TestLeaseKeptAcrossRestart(t *testing.T) {
	tc := newTestClusterWith(t, []string{"n1:8", "n2:8"}, twoShares, leaseKeys)
	n1 := tc.attachNode("n1")
	id := tc.runningOn(n1, "n1", 4)
	text, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	shorter := strings.Replace(string(text), leaseKeys, "job_lease = \"11m\"\n", 1)
	if shorter == string(text) {
		t.Fatal("could not set job_lease")
	}
	if err := os.WriteFile(tc.conf, []byte(shorter), 0o644); err != nil {
		t.Fatal(err)
	}
	started := tc.restartedAt()
	n2 := tc.attachNode("n2")
	tc.advanceBeating(testNodeTimeout+time.Second, n2)
	want := started.Add(testLease + leaseMargin)
	if j := tc.job(id); !j.RequeueAt.Equal(want) {
		t.Fatalf("requeue at %v, want the kept lease's end %v", j.RequeueAt, want)
	}
	tc.advanceBeating(want.Sub(tc.clock.now())+time.Second, n2)
	b, err := tc.ctl.sp.State(context.Background(), leaseKey)
	if err != nil || string(b) != fmt.Sprintf(`{"lease_ns":%d}`, int64(11*time.Minute)) {
		t.Fatalf("kept lease %s %v, want 11m once the old one has run out", b, err)
	}
}
