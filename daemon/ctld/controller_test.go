package ctld

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

const twoShares = `
[[share]]
name = "a"
partition = "gpu"
gpus = 4
strategy = "LEND"
users = ["*"]

[[share]]
name = "b"
partition = "gpu"
gpus = 4
strategy = "LEND_AND_BORROW"
borrow_limit = -1
users = ["*"]
`

func TestJobLifecycleThroughNodeProtocol(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	id := tc.submit("a", 2, nil)

	st := n.expect(api.MsgStart).Start
	if st.Job.ID != id || len(st.GPUs) != 2 || st.Run != 0 || st.Image != "img" || st.Grace != 7*time.Second {
		t.Fatalf("start order: %+v", st)
	}
	if got := tc.job(id); got.State != api.StateRunning || len(got.Allocs) != 1 || got.Allocs[0].Node != "n1" {
		t.Fatalf("job after start: %+v", got)
	}
	n.report(id, 0, "running", 0)
	n.report(id, 0, "exited", 3)
	if rm := n.expect(api.MsgRemove); rm.Stop.JobID != id {
		t.Fatalf("remove for %q, want %s", rm.Stop.JobID, id)
	}
	j := tc.waitState(id, api.StateFinished)
	if j.ExitStatus == nil || *j.ExitStatus != 3 {
		t.Fatalf("exit status %v, want 3", j.ExitStatus)
	}
	// A stale report (old run) is answered with a remove and changes nothing.
	n.report(id, 5, "exited", 0)
	n.expect(api.MsgRemove)
	if j := tc.job(id); *j.ExitStatus != 3 {
		t.Fatalf("stale report changed the job: %+v", j)
	}
}

func TestCrossSharePreemptionThroughNodeProtocol(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	borrower := tc.submit("b", 8, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != borrower || len(st.GPUs) != 8 {
		t.Fatalf("borrower start: %+v", st)
	}
	owner := tc.submit("a", 4, nil)
	stop := n.expect(api.MsgStop).Stop
	if stop.JobID != borrower || stop.Reason != "preempted" || stop.Grace != 7*time.Second {
		t.Fatalf("stop order: %+v", stop)
	}
	if j := tc.job(owner); j.State != api.StateQueued || j.Reason != "WaitingForPreemption" {
		t.Fatalf("owner while victim exits: state %s reason %q", j.State, j.Reason)
	}
	n.quiet(200 * time.Millisecond) // no start before the victim has exited
	n.report(borrower, 0, "exited", 0)
	n.expect(api.MsgRemove)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != owner || len(st.GPUs) != 4 {
		t.Fatalf("owner start: %+v", st)
	}
	j := tc.job(borrower)
	if j.State != api.StateQueued || j.Preemptions != 1 || j.ExitStatus != nil {
		t.Fatalf("borrower after preemption: state %s preemptions %d exit %v", j.State, j.Preemptions, j.ExitStatus)
	}
	// The borrower needs all 8 GPUs again: it restarts once the owner is done.
	n.quiet(200 * time.Millisecond)
	n.report(owner, 0, "exited", 0)
	n.expect(api.MsgRemove)
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != borrower || st.Run != 1 || len(st.GPUs) != 8 {
		t.Fatalf("borrower restart: %+v", st)
	}
}

func TestRestartKeepsJobsAndReconciles(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	running := tc.submit("b", 4, nil)
	n.expect(api.MsgStart)
	queued := tc.submit("b", 8, nil)
	tc.restart()

	if j := tc.job(running); j.State != api.StateRunning {
		t.Fatalf("running job after restart: %s", j.State)
	}
	if j := tc.job(queued); j.State != api.StateQueued {
		t.Fatalf("queued job after restart: %s", j.State)
	}
	// The node comes back still running the job: nothing is started twice.
	n2 := tc.attachNode("n1", api.RunningJob{JobID: running, Run: 0})
	n2.quiet(300 * time.Millisecond)
	n2.report(running, 0, "exited", 0)
	n2.expect(api.MsgRemove)
	if st := n2.expect(api.MsgStart).Start; st.Job.ID != queued {
		t.Fatalf("after the exit the queued job starts, got %+v", st)
	}
	// A finished job's record (qstat -x) survives another restart.
	tc.restart()
	if j := tc.job(running); j.State != api.StateFinished || j.ExitStatus == nil || *j.ExitStatus != 0 || len(j.History) == 0 {
		t.Fatalf("finished job after restart: %+v", j)
	}
	// Ids are never reused after a restart.
	if next := tc.submit("a", 1, nil); next <= queued && len(next) == len(queued) {
		t.Fatalf("id %s reused or lower than %s", next, queued)
	}
}

func TestNodeLosesJobIsRequeued(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	id := tc.submit("a", 2, nil)
	n.expect(api.MsgStart)
	n.conn.Close()
	// The node restarts without the container (it was never created).
	n2 := tc.attachNode("n1")
	st := n2.expect(api.MsgStart).Start
	if st.Job.ID != id || st.Run != 1 {
		t.Fatalf("restart after loss: %+v", st)
	}
}

func TestNodeTimeoutRequeues(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	n1 := tc.attachNode("n1")
	id := tc.submit("a", 4, nil)
	n1.expect(api.MsgStart)
	n2 := tc.attachNode("n2")
	// n1 goes silent (no heartbeats) while n2 keeps beating: almost
	// node_timeout passes, n2 beats, and then the rest of it passes; n1
	// is down, and its job waits for n1's job lease to run out.
	tc.advance(testNodeTimeout - time.Second)
	beat := tc.clock.now()
	n2.send(api.NodeMsg{Type: api.MsgHeartbeat})
	tc.heard("n2", beat)
	tc.advance(2 * time.Second)
	j := tc.job(id)
	if j.State != api.StateRunning || j.Reason != api.ReasonNodeUnreachable || j.RequeueAt.IsZero() {
		t.Fatalf("at node_timeout: state %s, reason %q, requeue at %v; want running, unreachable, a time", j.State, j.Reason, j.RequeueAt)
	}
	tc.advanceBeating(j.RequeueAt.Sub(tc.clock.now())+time.Second, n2)
	m := n2.expect(api.MsgStart)
	if m.Start.Job.ID != id || m.Start.Run != 1 {
		t.Fatalf("n2 got %+v", m)
	}
	if j := tc.job(id); j.Preemptions != 0 || j.NodeFailures != 1 {
		t.Fatalf("node loss: preemptions %d, node failures %d; want 0 and 1", j.Preemptions, j.NodeFailures)
	}
}

// TestNodeSilenceJudgedOnControllerClock: whether a silent node is lost
// is decided on the controller's clock (Options.Now), not by its
// connection's real-time read deadline. With a frozen clock a node silent
// for longer than node_timeout in real time keeps its connection and gets
// orders; once the clock passes node_timeout it is marked down, its
// connection closed and its job requeued.
func TestNodeSilenceJudgedOnControllerClock(t *testing.T) {
	const timeout = 300 * time.Millisecond
	tc := prepareTestCluster(t, []string{"n1:8"}, twoShares, "", Limits{})
	text, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	next := strings.Replace(string(text), fmt.Sprintf("node_timeout = %q\n", testNodeTimeout), fmt.Sprintf("node_timeout = %q\n", timeout), 1)
	next = strings.Replace(next, "heartbeat_interval = \"1s\"\n", "heartbeat_interval = \"100ms\"\n", 1)
	if next == string(text) {
		t.Fatal("could not set node_timeout")
	}
	if err := os.WriteFile(tc.conf, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	tc.clock.frozen = time.Now()
	tc.start()
	t.Cleanup(tc.stop)
	n1 := tc.attachNode("n1")
	// Silent for several node_timeouts of real time (the controller's own
	// heartbeats to it go on): still connected, still up.
	time.Sleep(4 * timeout)
	id := tc.submit("a", 2, nil)
	m := n1.expect(api.MsgStart)
	if m.Start.Job.ID != id {
		t.Fatalf("n1 got %+v", m)
	}
	tc.advance(time.Millisecond) // so that heard sees the report, not the hello
	beat := tc.clock.now()
	n1.report(id, m.Start.Run, api.RunRunning, 0)
	tc.heard("n1", beat)
	// Just short of node_timeout on the controller's clock: nothing yet.
	tc.advance(timeout - 10*time.Millisecond)
	if j := tc.job(id); j.State != api.StateRunning || j.NodeFailures != 0 {
		t.Fatalf("before node_timeout: state %s, node failures %d", j.State, j.NodeFailures)
	}
	// Past it: down, connection closed; the job is requeued as a node
	// failure once the node's job lease has run out.
	tc.advance(20 * time.Millisecond)
	select {
	case m, ok := <-n1.msgs:
		if ok {
			t.Fatalf("n1 got %s %+v after it was lost", m.Type, m)
		}
	case <-time.After(testWait):
		t.Fatal("the lost node's connection stayed open")
	}
	if j := tc.job(id); j.State != api.StateRunning || j.NodeFailures != 0 || j.Reason != api.ReasonNodeUnreachable {
		t.Fatalf("after node_timeout: state %s, reason %q, node failures %d; want running, unreachable, 0", j.State, j.Reason, j.NodeFailures)
	}
	tc.advance(conf.DefaultJobLease + 2*time.Second)
	if j := tc.job(id); j.State != api.StateQueued || j.NodeFailures != 1 {
		t.Fatalf("after the job lease: state %s, node failures %d; want queued, 1", j.State, j.NodeFailures)
	}
}

func TestMalformedRequestKeepsServing(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	cases := []struct {
		name, line string
	}{
		{"not json", "hello\n"},
		{"wrong version", `{"v":99,"op":"stat"}` + "\n"},
		{"unknown op", `{"v":1,"op":"explode"}` + "\n"},
		{"submit without job", `{"v":1,"op":"submit"}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := rawCall(t, tc.sock, c.line)
			if resp.Error == nil || resp.Error.Code != api.CodeBadRequest {
				t.Fatalf("answer %+v", resp)
			}
		})
	}
	if resp := tc.call(api.Request{Op: api.OpShares}); resp.Error != nil {
		t.Fatalf("controller stopped serving: %v", resp.Error)
	}
}

func TestRestartWithArrayRunning(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	arr := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, ArrayIndices: indices("0-2"), ArrayMax: 1}})
	if arr != "1[].t" {
		t.Fatalf("array id %q", arr)
	}
	first := n.expect(api.MsgStart).Start
	if first.Job.ID != "1[0].t" || first.Job.ArrayParent != arr {
		t.Fatalf("first subjob: %+v", first.Job)
	}
	tc.restart()
	n = tc.attachNode("n1", api.RunningJob{JobID: "1[0].t", Run: 0})
	n.quiet(200 * time.Millisecond) // %1: nothing else starts while [0] runs
	for i, id := range []string{"1[0].t", "1[1].t", "1[2].t"} {
		run := 0
		if i > 0 {
			st := n.expect(api.MsgStart).Start
			if st.Job.ID != id {
				t.Fatalf("start %s, want %s", st.Job.ID, id)
			}
			run = st.Run
		}
		n.report(id, run, "exited", 0)
		n.expect(api.MsgRemove)
		if i == 1 {
			// Again, with [0] and [1] done and [2] ordered to start on a
			// connection that dies: the node never had it, so it runs again.
			tc.restart()
			n = tc.attachNode("n1")
		}
	}
	if j := tc.waitState(arr, api.StateFinished); j.ExitStatus != nil && *j.ExitStatus != 0 {
		t.Fatalf("array exit %v", *j.ExitStatus)
	}
}

func TestMetrics(t *testing.T) {
	addr := freeAddr(t)
	tc := newTestClusterWith(t, []string{"n1:8"}, twoShares, fmt.Sprintf("metrics = %q", addr))
	n := tc.attachNode("n1")
	tc.submit("b", 6, nil) // borrows 2 of a's idle GPUs
	n.expect(api.MsgStart)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`sharq_share_quota_gpus{share="a"} 4`,
		`sharq_share_used_gpus{share="b"} 6`,
		`sharq_share_borrowed_gpus{share="b"} 2`,
		`sharq_share_lent_gpus{share="a"} 2`,
		`sharq_jobs_submitted_total 1`,
		`sharq_schedule_pass_seconds_count`,
		`sharq_submit_to_start_seconds_count 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestNVMLInventoryWins(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	inv := &api.Inventory{Source: "nvml", CPUs: 8}
	for i := 0; i < 4; i++ {
		inv.GPUs = append(inv.GPUs, api.GPU{Index: i, Device: fmt.Sprintf("/dev/nvidia%d", i), Model: "H200"})
	}
	n := tc.attachNodeWith("n1", inv)
	nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes
	if len(nodes) != 1 || nodes[0].GPUs != 4 || len(nodes[0].Problems) == 0 {
		t.Fatalf("node with 4 of 8 GPUs: %+v", nodes)
	}
	// The node as NVML found it decides: an 8-GPU job could never run, and
	// is refused at submission.
	if _, e := tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "b", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 8}}}); e == nil || e.Code != api.CodeResourceLimit {
		t.Fatalf("8-GPU job on a 4-GPU node: %v, want %s", e, api.CodeResourceLimit)
	}
	small := tc.submit("b", 4, nil)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != small {
		t.Fatalf("started %s, want %s", st.Job.ID, small)
	}
}
