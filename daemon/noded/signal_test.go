//go:build !unit

package noded_test

import (
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestSignalOrder: qsig's order reaches the processes of the run it names
// (the job's trap runs and it goes on), one for another run of the job is
// ignored, and the job still ends as its own exit says.
func TestSignalOrder(t *testing.T) {
	e := newEnv(t)
	e.run(t, "n1")
	p := e.ctl.accept(t)
	o := e.order(t, "70.t", `trap 'echo usr1 >> got' USR1
trap 'exit 7' TERM
touch ready
while :; do sleep 0.1; done
`)
	p.start(t, o)
	p.state(t, o.Job.ID, "running")
	awaitFile(t, e.workFile(o.Job.ID, "ready"))
	p.send(t, api.NodeMsg{Type: api.MsgSignal, Signal: &api.SignalOrder{JobID: o.Job.ID, Run: 5, Signal: "SIGUSR1"}})
	p.send(t, api.NodeMsg{Type: api.MsgSignal, Signal: &api.SignalOrder{JobID: "71.t", Run: 0, Signal: "SIGUSR1"}})
	p.send(t, api.NodeMsg{Type: api.MsgSignal, Signal: &api.SignalOrder{JobID: o.Job.ID, Run: 0, Signal: "SIGUSR1"}})
	awaitFile(t, e.workFile(o.Job.ID, "got"))
	p.send(t, api.NodeMsg{Type: api.MsgSignal, Signal: &api.SignalOrder{JobID: o.Job.ID, Run: 0, Signal: "SIGTERM"}})
	if ex := p.state(t, o.Job.ID, "exited"); ex.ExitStatus != 7 || ex.Error != "" {
		t.Errorf("job after SIGTERM by qsig: %+v, want its own exit 7", ex)
	}
	if got := readFile(t, e.workFile(o.Job.ID, "got")); got != "usr1\n" {
		t.Errorf("USR1 traps run: %q, want one (the other run's order ignored)", got)
	}
	// An order for an exited job does nothing (and does not stall the node).
	p.send(t, api.NodeMsg{Type: api.MsgSignal, Signal: &api.SignalOrder{JobID: o.Job.ID, Run: 0, Signal: "SIGUSR1"}})
	p.stop(t, o.Job.ID, time.Second, "deleted")
	p.await(t, "the exit reported again", func(states []api.JobStateMsg, _ int, _ bool) bool {
		n := 0
		for _, s := range states {
			if s.JobID == o.Job.ID && s.State == "exited" {
				n++
			}
		}
		return n == 2
	})
}
