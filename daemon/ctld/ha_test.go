package ctld

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/jobid"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// haTOML is the [etcd] part of a controller's configuration. The tests end
// leases by revoke and resign, never by expiry: the default session TTL (a
// leader that saw no renewal for 2/3 of it sends no order and stops) and a
// request timeout well above an etcd write's delay on a loaded machine.
func haTOML(endpoint string) string {
	return fmt.Sprintf("\n[etcd]\nendpoints = [%q]\nprefix = \"/sharq/t/\"\nsession_ttl = \"5s\"\ntimeout = \"10s\"\n", endpoint)
}

// Two controllers on one etcd: the second waits while the first leads,
// takes over when the first's session ends, restores its jobs, keeps the
// running one running, and never reuses a job number. The deposed leader
// acknowledges nothing more. A job that exited while no controller led
// (its exit reached none) is finished from the node's hello, not requeued
// and run again, and the node is told to remove its container.
func TestHAFailover(t *testing.T) {
	m := etcdtest.Start(t)
	ha := haTOML(m.ClientURL)
	a := newTestClusterWith(t, []string{"n1:8"}, twoShares+ha, `spool = "etcd"`)
	if a.ctl.lead == nil || a.ctl.epoch() <= 0 {
		t.Fatal("the first controller on etcd does not lead")
	}
	n1 := a.attachNode("n1")
	running := a.submit("a", 4, nil)
	start := n1.expect(api.MsgStart)
	if start.Epoch != a.ctl.epoch() {
		t.Fatalf("start order carries epoch %d, want the leader's %d", start.Epoch, a.ctl.epoch())
	}
	run := start.Start.Run
	n1.report(running, run, "running", 0)
	a1Runs := a.waitState(running, api.StateRunning).Runs
	exited := a.submit("b", 4, nil)
	startE := n1.expect(api.MsgStart)
	if startE.Start.Job.ID != exited {
		t.Fatalf("start of %s, want %s", startE.Start.Job.ID, exited)
	}
	runE := startE.Start.Run
	n1.report(exited, runE, "running", 0)
	exitedRuns := a.waitState(exited, api.StateRunning).Runs
	queued := a.submit("a", 4, nil) // beyond a's quota with the running one: it waits
	queuedState := a.job(queued).State

	// b campaigns and waits.
	b := prepareTestCluster(t, []string{"n1:8"}, twoShares+ha, `spool = "etcd"`, Limits{})
	type made struct {
		c   *Controller
		err error
	}
	bNew := make(chan made, 1)
	bctx, bcancel := context.WithCancel(context.Background())
	t.Cleanup(bcancel)
	go func() {
		c, err := New(bctx, Options{ConfigPath: b.conf, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		bNew <- made{c, err}
	}()
	// b waits as a candidate behind a: its key is in the election and New
	// has not returned.
	cli := etcdtest.Client(t, m.ClientURL)
	for deadline := time.Now().Add(testWait); ; time.Sleep(10 * time.Millisecond) {
		select {
		case r := <-bNew:
			t.Fatalf("the second controller did not wait: %v", r.err)
		default:
		}
		cs, err := leader.List(context.Background(), cli, "/sharq/t/"+electionDir)
		if err == nil && len(cs) == 2 && cs[0].Key == a.ctl.lead.Key() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second controller is not a candidate behind the first: %+v %v", cs, err)
		}
	}
	select {
	case r := <-bNew:
		t.Fatalf("the second controller did not wait: %v", r.err)
	default:
	}

	// a's lease ends behind its back (as after kill -9 or a long pause).
	resp, err := cli.Get(context.Background(), a.ctl.lead.Key())
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("a's election key: %v", err)
	}
	oldEpoch := a.ctl.epoch()
	if _, err := cli.Revoke(context.Background(), etcdLease(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	// a stops on its own, with leader.ErrLost (or a fenced write).
	select {
	case err := <-a.done:
		if err == nil {
			t.Fatal("a stopped without an error after losing leadership")
		}
		if !errors.Is(err, leader.ErrLost) && !errors.Is(err, errNotValid) {
			t.Logf("a stopped: %v", err)
		}
		a.cancel = nil
	case <-time.After(10 * time.Second):
		t.Fatal("a kept running after its session ended")
	}
	// Whatever a is asked now is not acknowledged.
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	var jobID string
	var e *api.Error
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err = a.ctl.do(ctx, func() {
		jobID, e = a.ctl.submit(id, &api.SubmitSpec{Job: api.JobSpec{Name: "late", Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}})
	})
	cancel()
	if err == nil && e == nil {
		t.Fatalf("the deposed leader acknowledged job %s", jobID)
	}

	var r made
	select {
	case r = <-bNew:
	case <-time.After(15 * time.Second):
		t.Fatal("b did not take over")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	b.ctl, b.cancel, b.done = r.c, bcancel, make(chan error, 1)
	go func() { b.done <- r.c.Run(bctx) }()
	t.Cleanup(b.stop)
	waitSocket(t, b.sock)
	if b.ctl.epoch() <= oldEpoch {
		t.Fatalf("new leader's epoch %d is not above %d", b.ctl.epoch(), oldEpoch)
	}
	if j := b.job(running); j.State != api.StateRunning {
		t.Fatalf("running job after failover: %s", j.State)
	}
	if j := b.job(queued); j.State != queuedState {
		t.Fatalf("pending job after failover: %s, was %s", j.State, queuedState)
	}
	// The node finds the new leader and reports its containers: the
	// running one re-adopted, not started again; the one that exited
	// meanwhile finished with its status, and removed.
	n1b := b.attachNode("n1", api.RunningJob{JobID: running, Run: run},
		api.RunningJob{JobID: exited, Run: runE, Exited: true, ExitStatus: 3})
	if rm := n1b.expect(api.MsgRemove); rm.Stop == nil || rm.Stop.JobID != exited {
		t.Fatalf("node n1: remove %+v, want job %s's", rm.Stop, exited)
	}
	select {
	case m := <-n1b.msgs:
		t.Fatalf("node n1: unexpected %s %+v", m.Type, m.Stop)
	case <-time.After(300 * time.Millisecond):
	}
	if j := b.job(running); j.State != api.StateRunning || j.Runs != a1Runs {
		t.Fatalf("re-adopted job: %s after %d runs", j.State, j.Runs)
	}
	if j := b.job(exited); j.State != api.StateFinished || j.Runs != exitedRuns || j.ExitStatus == nil || *j.ExitStatus != 3 {
		t.Fatalf("job that exited during the failover: %s after %d runs (had %d), exit %v", j.State, j.Runs, exitedRuns, j.ExitStatus)
	}
	cs := b.call(api.Request{Op: api.OpControllers}).Controllers
	if len(cs) != 1 || !cs[0].Leader || cs[0].Epoch != b.ctl.epoch() || cs[0].LeaderSince.IsZero() || cs[0].Nodes != b.listen {
		t.Fatalf("show controllers after failover: %+v", cs)
	}
	// The numbers go on: no block reserved by the old leader is skipped.
	next := b.submit("b", 1, nil)
	if num(t, next) != num(t, queued)+1 {
		t.Fatalf("new leader's first job is %s, want the number after %s", next, queued)
	}
}

func etcdLease(id int64) clientv3.LeaseID { return clientv3.LeaseID(id) }

func waitSocket(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		if conn, err := net.Dial("unix", path); err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("socket %s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func num(t *testing.T, id string) uint64 {
	t.Helper()
	r, err := jobid.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Seq
}

// haTOMLEndpoints is the [etcd] part with several endpoints
// (comma-separated) and the default TTL and timeout.
func haTOMLEndpoints(endpoints string) string {
	var q []string
	for _, ep := range strings.Split(endpoints, ",") {
		q = append(q, fmt.Sprintf("%q", ep))
	}
	return fmt.Sprintf("\n[etcd]\nendpoints = [%s]\nprefix = \"/sharq/t/\"\n", strings.Join(q, ", "))
}

// A leader on a three-member etcd loses one member, the raft leader or
// not, while it takes submissions: it stays the leader and acknowledges
// every one (its etcd client has every endpoint; a write whose member
// died goes to another).
func TestHAEtcdMemberLoss(t *testing.T) {
	for _, victim := range []string{"raft leader", "follower"} {
		t.Run(victim, func(t *testing.T) {
			ms := etcdtest.StartCluster(t, 3)
			a := newTestClusterWith(t, []string{"n1:8"}, twoShares+haTOMLEndpoints(etcdtest.Endpoints(ms)), `spool = "etcd"`)
			if a.ctl.lead == nil {
				t.Fatal("the controller does not lead")
			}
			epoch := a.ctl.epoch()
			// Submissions go on, back to back, while the member stops.
			var acked atomic.Int64
			stop, errc := make(chan struct{}), make(chan error, 1)
			go func() {
				id := Identity{UID: 1000, GID: 1000, User: "alice"}
				for {
					select {
					case <-stop:
						errc <- nil
						return
					default:
					}
					var e *api.Error
					err := a.ctl.do(context.Background(), func() {
						_, e = a.ctl.submit(id, &api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"},
							WorkDir: "/tmp", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}})
					})
					if err == nil && e != nil {
						err = e
					}
					if err != nil {
						errc <- fmt.Errorf("submission %d: %w", acked.Load()+1, err)
						return
					}
					acked.Add(1)
				}
			}()
			waitAcked := func(n int64) {
				t.Helper()
				for acked.Load() < n {
					select {
					case err := <-errc:
						t.Fatal(err)
					case err := <-a.done:
						a.cancel = nil
						t.Fatalf("the leader stopped: %v", err)
					case <-time.After(time.Millisecond):
					}
				}
			}
			waitAcked(10)
			k := etcdtest.Leader(ms)
			if victim == "follower" {
				k = (k + 1) % len(ms)
			}
			ms[k].Stop()
			waitAcked(acked.Load() + 40)
			close(stop)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-a.done:
				a.cancel = nil
				t.Fatalf("the leader stopped: %v", err)
			default:
			}
			if !a.ctl.lead.Valid() || a.ctl.epoch() != epoch {
				t.Fatalf("leadership: valid %v, epoch %d (was %d)", a.ctl.lead.Valid(), a.ctl.epoch(), epoch)
			}
			if n := len(a.call(api.Request{Op: api.OpStat, Stat: &api.StatFilter{}}).Jobs); n != int(acked.Load()) {
				t.Fatalf("%d jobs, %d acknowledged", n, acked.Load())
			}
		})
	}
}
