package ctld

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/client"
)

// TestRerun is qrerun against the controller and a scripted node: the job
// is stopped with its grace, goes back to the queue once it has exited
// (whatever its status), starts again as its next run, and no preemption
// is counted. Refusals: another user's job, a job not running, an
// unknown id.
func TestRerun(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	running := tc.submit("b", 8, nil)
	n.expect(api.MsgStart)
	n.report(running, 0, "running", 0)
	queued := tc.submit("b", 8, nil)
	for _, tt := range []struct {
		name string
		who  Identity
		id   string
		code string
	}{
		{name: "another user", who: mallory, id: running, code: api.CodePermission},
		{name: "queued job", who: alice, id: queued, code: api.CodeInvalidState},
		{name: "unknown job", who: alice, id: "999", code: api.CodeUnknownJob},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := tc.asUser(tt.who, api.Request{Op: api.OpRerun, IDs: []string{tt.id}})
			if resp.Error == nil || resp.Error.Code != tt.code {
				t.Fatalf("error %+v, want code %s", resp.Error, tt.code)
			}
		})
	}
	n.quiet(50 * time.Millisecond)
	if resp := tc.asUser(alice, api.Request{Op: api.OpRerun, IDs: []string{running}}); resp.Error != nil {
		t.Fatalf("qrerun: %v", resp.Error)
	}
	if stop := n.expect(api.MsgStop).Stop; stop.JobID != running || stop.Reason != api.StopRerun || stop.Grace != 7*time.Second {
		t.Fatalf("stop order %+v", stop)
	}
	if j := tc.job(running); j.State != api.StateExiting {
		t.Fatalf("state while stopping: %s", j.State)
	}
	// Twice is refused: it is stopping already.
	if resp := tc.asUser(alice, api.Request{Op: api.OpRerun, IDs: []string{running}}); resp.Error == nil || resp.Error.Code != api.CodeInvalidState {
		t.Fatalf("second qrerun: %+v", resp.Error)
	}
	n.report(running, 0, "exited", 0) // it checkpointed and exited 0: still rerun
	n.expect(api.MsgRemove)
	st := n.expect(api.MsgStart).Start
	if st.Job.ID != running || st.Run != 1 {
		t.Fatalf("restart order %+v, want run 1 of %s", st, running)
	}
	j := tc.job(running)
	if j.State != api.StateRunning || j.Preemptions != 0 || j.ExitStatus != nil {
		t.Fatalf("after the rerun: state %s preemptions %d exit %v", j.State, j.Preemptions, j.ExitStatus)
	}
	if !slices.ContainsFunc(j.History, func(e api.HistoryEntry) bool { return strings.HasPrefix(e.What, "rerun by alice") }) {
		t.Errorf("history: %+v", j.History)
	}
	// A rerun survives a controller restart: the stop is sent again when
	// the node comes back, and the exit requeues the job.
	n.report(running, 1, "running", 0)
	if resp := tc.asUser(alice, api.Request{Op: api.OpRerun, IDs: []string{running}}); resp.Error != nil {
		t.Fatalf("qrerun: %v", resp.Error)
	}
	n.expect(api.MsgStop)
	tc.restart()
	n2 := tc.attachNode("n1", api.RunningJob{JobID: running, Run: 1})
	if stop := n2.expect(api.MsgStop).Stop; stop.JobID != running || stop.Reason != api.StopRerun {
		t.Fatalf("stop after the restart %+v", stop)
	}
	n2.report(running, 1, "exited", 271)
	n2.expect(api.MsgRemove)
	if st := n2.expect(api.MsgStart).Start; st.Job.ID != running || st.Run != 2 {
		t.Fatalf("restart order %+v, want run 2 of %s", st, running)
	}
}

// TestOrder is qorder against the controller: two waiting jobs of a share
// exchange places (the later one starts first), and a restart keeps the
// exchange; refusals for what qorder may not reorder.
func TestOrder(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	running := tc.submit("a", 4, nil)
	n.expect(api.MsgStart)
	first := tc.submit("a", 4, nil)
	second := tc.submit("a", 4, nil)
	low := tc.submit("a", 4, ptr(0))
	other := tc.submit("b", 8, nil)
	n.quiet(100 * time.Millisecond)
	for _, tt := range []struct {
		name string
		who  Identity
		ids  []string
		code string
	}{
		{name: "one id", who: alice, ids: []string{first}, code: api.CodeBadRequest},
		{name: "the same job twice", who: alice, ids: []string{first, first}, code: api.CodeBadRequest},
		{name: "running job", who: alice, ids: []string{running, first}, code: api.CodeInvalidState},
		{name: "two shares", who: alice, ids: []string{first, other}, code: api.CodeInvalidState},
		{name: "another user's jobs", who: mallory, ids: []string{first, second}, code: api.CodePermission},
		{name: "different sharq priorities", who: alice, ids: []string{first, low}, code: api.CodePermission},
		{name: "unknown job", who: alice, ids: []string{first, "999"}, code: api.CodeUnknownJob},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := tc.asUser(tt.who, api.Request{Op: api.OpOrder, IDs: tt.ids})
			if resp.Error == nil || resp.Error.Code != tt.code {
				t.Fatalf("error %+v, want code %s", resp.Error, tt.code)
			}
		})
	}
	if resp := tc.asUser(alice, api.Request{Op: api.OpOrder, IDs: []string{first, second}}); resp.Error != nil {
		t.Fatalf("qorder: %v", resp.Error)
	}
	tc.restart()
	n = tc.attachNode("n1", api.RunningJob{JobID: running, Run: 0})
	n.report(running, 0, "exited", 0)
	n.expect(api.MsgRemove)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != second {
		t.Fatalf("after qorder %s %s the first to start is %s, want %s", first, second, st.Job.ID, second)
	}
	if j := tc.job(first); j.QueuePlace == 0 || !slices.ContainsFunc(j.History, func(e api.HistoryEntry) bool { return strings.HasPrefix(e.What, "place exchanged with "+second) }) {
		t.Errorf("first after qorder: place %d history %+v", j.QueuePlace, j.History)
	}
}

// TestTracejobFromController runs the real tracejob against the
// controller: a job's history while it runs and once it has finished.
func TestTracejobFromController(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	id := tc.submit("b", 2, nil)
	n.expect(api.MsgStart)
	n.report(id, 0, "running", 0)
	if resp := tc.asUser(alice, api.Request{Op: api.OpSignal, IDs: []string{id}, Signal: "SIGUSR1"}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	n.expect(api.MsgSignal)
	tracejob := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		sys := &cli.Sys{Stdout: &out, Stderr: &errb, Now: time.Now, Location: time.UTC, Call: client.Caller(tc.sock)}
		code := cli.Tracejob(context.Background(), append([]string{"tracejob"}, args...), sys)
		return out.String(), errb.String(), code
	}
	for _, tt := range []struct {
		name string
		want []string
	}{
		{name: "running", want: []string{"\nJob: " + id + "\n\n", "  S    submitted to b\n", "  S    signal SIGUSR1 sent by alice\n"}},
		{name: "finished", want: []string{"  S    signal SIGUSR1 sent by alice\n", "  S    exited on n1 with status 3\n"}},
	} {
		if tt.name == "finished" {
			n.report(id, 0, "exited", 3)
			n.expect(api.MsgRemove)
			tc.waitState(id, api.StateFinished)
		}
		out, errOut, code := tracejob(strings.SplitN(id, ".", 2)[0])
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: tracejob lacks %q:\n%s", tt.name, w, out)
			}
		}
	}
	if _, errOut, code := tracejob("999"); code != cli.ExitUnknownJob || errOut != "tracejob: Couldn't find Job Id 999\n" {
		t.Errorf("unknown job: exit %d, %q", code, errOut)
	}
}

// TestArrayCommands: qsig ID[] signals the running subjobs of an array
// (the others are passed over), a single waiting subjob is refused, and
// qrerun ID[] reruns the running subjobs.
func TestArrayCommands(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	arr := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "b", Command: []string{"true"}, WorkDir: "/tmp",
		ArrayIndices: indices("0-3"), Resources: api.Resources{Nodes: 1, GPUsPerNode: 4}}})
	started := map[string]bool{}
	for range 2 {
		started[n.expect(api.MsgStart).Start.Job.ID] = true
	}
	n.quiet(100 * time.Millisecond)
	if resp := tc.asUser(alice, api.Request{Op: api.OpSignal, IDs: []string{arr}, Signal: "SIGHUP"}); resp.Error != nil {
		t.Fatalf("qsig %s: %v", arr, resp.Error)
	}
	for range 2 {
		o := n.expect(api.MsgSignal).Signal
		if !started[o.JobID] || o.Signal != "SIGHUP" {
			t.Fatalf("signal order %+v; started %v", o, started)
		}
		delete(started, o.JobID)
	}
	n.quiet(100 * time.Millisecond)
	waiting := strings.Replace(arr, "[]", "[3]", 1)
	if resp := tc.asUser(alice, api.Request{Op: api.OpSignal, IDs: []string{waiting}, Signal: "SIGHUP"}); resp.Error == nil {
		t.Errorf("qsig of a waiting subjob %s: no error", waiting)
	}
	if resp := tc.asUser(alice, api.Request{Op: api.OpRerun, IDs: []string{arr}}); resp.Error != nil {
		t.Fatalf("qrerun %s: %v", arr, resp.Error)
	}
	stopped := map[string]bool{}
	for range 2 {
		o := n.expect(api.MsgStop).Stop
		if o.Reason != api.StopRerun {
			t.Fatalf("stop order %+v", o)
		}
		stopped[o.JobID] = true
	}
	if len(stopped) != 2 {
		t.Errorf("stopped %v, want both running subjobs", stopped)
	}
}
