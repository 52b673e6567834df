package ctld

import (
	"context"
	"strings"
	"testing"
	"time"

	"sharq/api"
)

// A node that lacks a configured mount says so in its hello: it stays
// down, with the problem shown, and gets no job; another node without the
// problem runs the job.
func TestNodeMissingMountStaysDown(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8", "n2:8"}, twoShares)
	n1 := tc.attachNodeWith("n1", &api.Inventory{Source: "config", CPUs: 8, Missing: []string{"mount /scratch: no such file or directory"}})
	n2 := tc.attachNode("n2")
	id := tc.submit("a", 1, nil)
	if st := n2.expect(api.MsgStart).Start; st.Job.ID != id {
		t.Fatalf("started %s on n2, want %s", st.Job.ID, id)
	}
	n1.quiet(200 * time.Millisecond)
	nodes := tc.call(api.Request{Op: api.OpNodes}).Nodes
	if nodes[0].Name != "n1" || nodes[0].State != "down" || !strings.Contains(strings.Join(nodes[0].Problems, ";"), "mount /scratch") {
		t.Fatalf("n1: %+v", nodes[0])
	}
	if nodes[1].State != "up" {
		t.Fatalf("n2: %+v", nodes[1])
	}
}

// image "host" is refused at submit where the partition does not allow it.
func TestSubmitHostImageRefused(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	var e *api.Error
	spec := &api.SubmitSpec{Job: api.JobSpec{Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Image: "host"}}
	if err := tc.ctl.do(context.Background(), func() { _, e = tc.ctl.submit(Identity{UID: 1000, GID: 1000, User: "alice"}, spec) }); err != nil {
		t.Fatal(err)
	}
	if e == nil || e.Code != api.CodeBadRequest || !strings.Contains(e.Message, `image "host"`) || !strings.Contains(e.Message, "host_image") {
		t.Fatalf("submit with image host: %v", e)
	}
	if jobs := tc.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{}}).Jobs; len(jobs) != 0 {
		t.Fatalf("a job was queued: %+v", jobs)
	}
}
