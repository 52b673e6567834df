//go:build !unit

package noded_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestControllerNotice: the controller's notice (MsgNotice: an idle job's
// mark) reaches the sessions of the job's run on their terminal, before
// a stop's, cut to api.MaxNoticeText and without control characters; a
// notice for another run or an unknown job reaches nobody.
func TestControllerNotice(t *testing.T) {
	e := newEnv(t)
	e.cfg.Cluster.SessionListen = "127.0.0.1:0"
	e.run(t, "n1")
	p := e.ctl.accept(t)
	const id = "150.t"
	o := e.order(t, id, "trap '' TERM\nwhile :; do sleep 0.1; done\n")
	p.start(t, o)
	p.state(t, id, "running")
	s := openSession(t, p, id, o.Run, false, "sleep", "60")
	if err := s.ready(); err != nil || s.refusal != "" {
		t.Fatalf("session: %v %s", err, s.refusal)
	}
	done := make(chan error, 1)
	go func() { done <- s.run() }()
	long := "job 150.t: marked IdleGPUs\x1b[2J\n" + strings.Repeat("x", api.MaxNoticeText)
	for _, n := range []api.NoticeOrder{{JobID: id, Run: o.Run + 1, Text: "another run"}, {JobID: "151.t", Text: "another job"}, {JobID: id, Run: o.Run, Text: long}} {
		p.send(t, api.NodeMsg{Type: api.MsgNotice, Notice: &n})
	}
	p.stop(t, id, 0, api.StopDeleted)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{("job 150.t: marked IdleGPUs [2J " + strings.Repeat("x", api.MaxNoticeText))[:api.MaxNoticeText],
		"the job was deleted (qdel): it is stopped now (SIGTERM, then SIGKILL after 0s)"}
	if got := s.notices(); !slices.Equal(got, want) {
		t.Errorf("notices %q, want %q", got, want)
	}
	p.state(t, id, "exited")
}
