package ctld

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// A big array of jobs that all fit at once does not flood its node: at
// most startWindow starts are unanswered, the connection stays up, and
// each answer lets one more start through. (Before, every start went out at
// once, and past 4096 queued orders the node was disconnected.)
func TestStartOrdersFlowControlled(t *testing.T) {
	const subjobs = 1000
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	// A node with CPUs for every subjob (each counts one).
	n := tc.attachNodeWith("n1", &api.Inventory{Source: "config", CPUs: subjobs})
	n.heartbeats(200 * time.Millisecond)
	tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "many", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1}, ArrayIndices: indices(fmt.Sprintf("0-%d", subjobs-1))}})
	var starts []*api.StartOrder
	for range startWindow {
		starts = append(starts, n.expect(api.MsgStart).Start)
	}
	n.quiet(300 * time.Millisecond)
	// Each answer (running, or a failure) frees one place.
	for i, st := range starts[:10] {
		state := api.RunRunning
		if i%2 == 1 {
			state = api.RunExited
		}
		n.report(st.Job.ID, st.Run, state, 0)
		for {
			m := n.expect2(api.MsgStart, api.MsgRemove)
			if m.Type == api.MsgStart {
				break
			}
		}
	}
	n.quiet(300 * time.Millisecond)
	if nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes; nodes[0].State != "up" {
		t.Fatalf("node after %d queued starts: %+v", subjobs, nodes[0])
	}
}

// TestHelloRefusalCodes: a refused hello carries a code for the node to act
// on (it never reads the text).
func TestHelloRefusalCodes(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	cases := []struct {
		name  string
		hello api.NodeMsg
		want  api.RefusalCode
		text  string // in the refusal, when set
	}{
		{"bad secret", api.NodeMsg{V: api.NodeVersion, Type: api.MsgHello, Node: "n1", Secret: "wrong"}, api.RefusedSecret, ""},
		{"unknown node", api.NodeMsg{V: api.NodeVersion, Type: api.MsgHello, Node: "secret-n9", Secret: testSecret}, api.RefusedNode, ""},
		// Version 1 shipped the controller's job record in start orders.
		{"old protocol", api.NodeMsg{V: 1, Type: api.MsgHello, Node: "n1", Secret: testSecret}, api.RefusedVersion,
			"node protocol version 1, this controller speaks 2"},
		{"newer protocol", api.NodeMsg{V: api.NodeVersion + 1, Type: api.MsgHello, Node: "n1", Secret: testSecret}, api.RefusedVersion, ""},
		// The core refuses a NodeUp out of range: the node is told so.
		{"cpus out of range", api.NodeMsg{V: api.NodeVersion, Type: api.MsgHello, Node: "n1", Secret: testSecret,
			Inventory: &api.Inventory{Source: "declared", CPUs: 1 << 30}}, api.RefusedOther, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tc.listen)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := api.Encode(conn, c.hello); err != nil {
				t.Fatal(err)
			}
			var w api.NodeMsg
			if err := api.NewDecoder(conn).Decode(&w); err != nil || w.Type != api.MsgWelcome || w.Error == "" || w.Code != c.want {
				t.Fatalf("welcome %+v (%v), want code %q", w, err, c.want)
			}
			if !strings.Contains(w.Error, c.text) {
				t.Errorf("refusal %q does not say %q", w.Error, c.text)
			}
		})
	}
	// None of them brought n1 up: a job waits for a node.
	id := tc.submit("a", 1, nil)
	j := tc.job(id)
	for deadline := time.Now().Add(testWait); j.State == api.StateQueued && j.Reason == "" && time.Now().Before(deadline); j = tc.job(id) {
		time.Sleep(10 * time.Millisecond) // until the first pass has said something
	}
	if j.State != api.StateQueued || j.Reason != "NodesDown" {
		t.Fatalf("job after refused hellos: state %s reason %q, want Q NodesDown", j.State, j.Reason)
	}
}
