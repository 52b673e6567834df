//go:build !unit

package ctld

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func TestReloadWithBadFileKeepsConfig(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	good, err := os.ReadFile(tc.conf)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `strategy = "LEND"`, `strategy = "SHARE_EVERYTHING"`, 1)
	if err := os.WriteFile(tc.conf, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	resp := tc.call(api.Request{Op: api.OpReconfigure})
	if resp.Error == nil || resp.Error.Code != api.CodeConfig || !strings.Contains(resp.Error.Message, "cluster.toml:") ||
		!strings.Contains(resp.Error.Message, "SHARE_EVERYTHING") {
		t.Fatalf("bad reload answer: %+v", resp.Error)
	}
	shares := tc.call(api.Request{Op: api.OpShares}).Shares
	if len(shares) != 2 || shares[0].Strategy != "LEND" {
		t.Fatalf("old config not in force: %+v", shares)
	}
	// A good file with a third share is taken.
	more := string(good) + "\n[[share]]\nname = \"c\"\npartition = \"gpu\"\ngpus = 0\nstrategy = \"LEND_AND_BORROW\"\nusers = [\"*\"]\n"
	if err := os.WriteFile(tc.conf, []byte(more), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := tc.call(api.Request{Op: api.OpReconfigure}); resp.Error != nil {
		t.Fatalf("good reload: %v", resp.Error)
	}
	if shares := tc.call(api.Request{Op: api.OpShares}).Shares; len(shares) != 3 {
		t.Fatalf("new share missing: %+v", shares)
	}
}

func TestDeleteSubjobBeforeItStarts(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	arr := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, ArrayIndices: indices("0-2"), ArrayMax: 1}})
	if st := n.expect(api.MsgStart).Start; st.Job.ID != "1[0].t" {
		t.Fatalf("first start %s", st.Job.ID)
	}
	if resp := tc.call(api.Request{Op: api.OpDelete, IDs: []string{"1[1]"}}); resp.Error != nil {
		t.Fatalf("qdel 1[1]: %v", resp.Error)
	}
	if resp := tc.call(api.Request{Op: api.OpDelete, IDs: []string{"1[7]"}}); resp.Error == nil || resp.Error.Code != api.CodeUnknownJob {
		t.Fatalf("qdel of an index the array lacks: %+v", resp.Error)
	}
	n.report("1[0].t", 0, "exited", 0)
	n.expect(api.MsgRemove)
	if st := n.expect(api.MsgStart).Start; st.Job.ID != "1[2].t" {
		t.Fatalf("after the deleted index, %s started", st.Job.ID)
	}
	n.report("1[2].t", 0, "exited", 0)
	n.expect(api.MsgRemove)
	tc.waitState(arr, api.StateFinished)
	if j := tc.job("1[1].t"); j.State != api.StateFinished || j.Reason != "Deleted" {
		t.Fatalf("deleted subjob: %s %q", j.State, j.Reason)
	}
}

func TestDrainOutlivesRestart(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	if resp := tc.call(api.Request{Op: api.OpDrain, Node: "n1"}); resp.Error != nil {
		t.Fatalf("drain: %v", resp.Error)
	}
	tc.restart()
	n1 := tc.attachNode("n1")
	n2 := tc.attachNode("n2")
	tc.submit("a", 1, nil)
	if st := n2.expect(api.MsgStart).Start; st.Job.ID == "" {
		t.Fatal("no start on n2")
	}
	n1.quiet(200 * time.Millisecond)
	nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes
	if nodes[0].Name != "n1" || nodes[0].State != "drained" {
		t.Fatalf("nodes after restart: %+v", nodes)
	}
	if resp := tc.call(api.Request{Op: api.OpResume, Node: "n1"}); resp.Error != nil {
		t.Fatalf("resume: %v", resp.Error)
	}
	tc.restart()
	if nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes; nodes[0].State == "drained" {
		t.Fatalf("resume did not outlive the restart: %+v", nodes[0])
	}
}

// TestRestartKeepsArrayBegun: an array whose subjob runs reads B after a
// controller restart, also before its node is back (the core then says
// NodesDown of its remaining indices), and after it is: the old code showed
// Q until another subjob started.
func TestRestartKeepsArrayBegun(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	arr := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, ArrayIndices: indices("0-2"), ArrayMax: 1}})
	n.expect(api.MsgStart)
	if j := tc.job(arr); j.State != api.StateArray {
		t.Fatalf("before the restart: state %s", j.State)
	}
	tc.restart()
	if j := tc.job(arr); j.State != api.StateArray {
		t.Errorf("after the restart, node not back: state %s (reason %q), want B", j.State, j.Reason)
	}
	n = tc.attachNode("n1", api.RunningJob{JobID: "1[0].t", Run: 0})
	n.quiet(200 * time.Millisecond)
	if j := tc.job(arr); j.State != api.StateArray {
		t.Errorf("after the node is back: state %s (reason %q), want B", j.State, j.Reason)
	}
	// Held and released, it is begun again, not queued.
	for _, cmd := range []api.Request{{Op: api.OpHold, IDs: []string{arr}}, {Op: api.OpRelease, IDs: []string{arr}}} {
		if r := tc.call(cmd); r.Error != nil || len(r.Errors) > 0 {
			t.Fatalf("%s: %v %v", cmd.Op, r.Error, r.Errors)
		}
	}
	if j := tc.job(arr); j.State != api.StateArray {
		t.Errorf("after qhold and qrls: state %s, want B", j.State)
	}
}
