//go:build !unit

package noded_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// leaseScript records its start and its SIGTERM in its work directory,
// then runs until killed.
const leaseScript = `trap 'echo term >> events; exit 143' TERM
echo start >> events
while :; do sleep 0.1; done
`

// TestLeaseFence: a node whose heartbeats the controller stops
// acknowledging (the link lost them) stops its jobs as its lease runs out
// (SIGTERM, reported with the lease stop), refuses new starts meanwhile,
// and starts jobs again once its lease is renewed.
func TestLeaseFence(t *testing.T) {
	e := newEnv(t)
	e.ctl.lease = 2 * time.Second
	e.run(t, "n1")
	p := e.ctl.accept(t)
	if p.hello.Seq == 0 {
		t.Fatal("the hello carries no sequence number")
	}
	o := e.order(t, "300.t", leaseScript)
	p.start(t, o)
	p.state(t, o.Job.ID, "running")
	awaitFile(t, e.workFile(o.Job.ID, "events"))
	// Renewals go on: several heartbeats acknowledged, the job still runs.
	p.await(t, "acknowledged heartbeats", func(_ []api.JobStateMsg, beats int, _ bool) bool { return beats >= 5 })
	if b, err := os.ReadFile(filepath.Join(e.stateDir("n1"), "lease")); err != nil || len(b) == 0 {
		t.Errorf("the renewal is not kept in the state directory: %q %v", b, err)
	}

	p.setAcking(false)
	ex := p.state(t, o.Job.ID, "exited")
	if ex.Stop != api.StopLease || ex.Error == "" {
		t.Errorf("exit %+v, want the lease stop", ex)
	}
	if got := readFile(t, e.workFile(o.Job.ID, "events")); got != "start\nterm\n" {
		t.Errorf("the job saw %q, want its start and a SIGTERM", got)
	}
	o2 := e.order(t, "301.t", "echo start >> events\nsleep 100\n")
	p.start(t, o2)
	if f := p.state(t, o2.Job.ID, "failed"); !f.NodeFault {
		t.Errorf("start with the lease out: %+v, want a node fault", f)
	}
	if _, err := os.Stat(e.workFile(o2.Job.ID, "events")); err == nil {
		t.Error("a job started while the lease was out")
	}

	// Renewed: jobs start again.
	p.setAcking(true)
	deadline := time.Now().Add(waitLimit)
	for i := 0; ; i++ {
		// Refused while the renewal is on its way: another job, later.
		o3 := e.order(t, fmt.Sprintf("%d.t", 320+i), "echo start >> events\n")
		p.start(t, o3)
		var got api.JobStateMsg
		p.await(t, "an answer to the start", func(states []api.JobStateMsg, _ int, _ bool) bool {
			i := slices.IndexFunc(states, func(s api.JobStateMsg) bool { return s.JobID == o3.Job.ID })
			if i >= 0 {
				got = states[i]
			}
			return i >= 0
		})
		if got.State != api.RunFailed {
			if ex := p.state(t, o3.Job.ID, "exited"); ex.ExitStatus != 0 || ex.Stop != api.StopNone {
				t.Errorf("job after the renewal: %+v", ex)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no start after the lease was renewed")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestLeaseSurvivesRestart: a sharqd restarted while it cannot reach the
// controller (every hello refused) does not begin a new lease: it fences
// the job it re-adopts, and its next hello reports the lease stop.
func TestLeaseSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	e.ctl.lease = 3 * time.Second
	d := e.run(t, "n1")
	p1 := e.ctl.accept(t)
	o := e.order(t, "310.t", leaseScript)
	p1.start(t, o)
	p1.state(t, o.Job.ID, "running")
	awaitFile(t, e.workFile(o.Job.ID, "events"))
	p1.await(t, "acknowledged heartbeats", func(_ []api.JobStateMsg, beats int, _ bool) bool { return beats >= 3 })

	e.ctl.refuse("the controller is unreachable")
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	e.run(t, "n1")
	e.ctl.awaitRefusals(t, 1)
	awaitContent(t, e.workFile(o.Job.ID, "events"), "start\nterm\n")

	e.ctl.refuse("")
	p2 := e.ctl.accept(t)
	if !slices.ContainsFunc(p2.hello.Running, func(r api.RunningJob) bool { return r.JobID == o.Job.ID && r.Exited }) {
		// The hello came before the exit: its report follows.
		ex := p2.state(t, o.Job.ID, "exited")
		if ex.Stop != api.StopLease {
			t.Errorf("exit after the restart: %+v, want the lease stop", ex)
		}
		return
	}
	i := slices.IndexFunc(p2.hello.Running, func(r api.RunningJob) bool { return r.JobID == o.Job.ID })
	if r := p2.hello.Running[i]; r.Stop != api.StopLease || r.Error == "" {
		t.Errorf("hello after the restart lists %+v, want its exit with the lease stop", r)
	}
}

// awaitContent waits until path holds want.
func awaitContent(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		b, _ := os.ReadFile(path)
		if string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q, want %q", path, b, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
