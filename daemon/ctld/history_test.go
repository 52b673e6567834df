package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/pgtest"
)

// waitRecord polls the store until it has job id.
func waitRecord(t *testing.T, s acct.Store, id string) acct.Record {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := s.Jobs(context.Background(), acct.JobFilter{ID: id})
		if err == nil && len(got) == 1 {
			return got[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never reached the history: %v %v", id, got, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRecorded waits until the spool record says the history has the job.
func (tc *testCluster) waitRecorded(id string) {
	tc.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !tc.job(id).Acct.Recorded {
		if time.Now().After(deadline) {
			tc.t.Fatalf("job %s: never marked recorded in the spool", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tc *testCluster) store() acct.Store {
	tc.t.Helper()
	s, err := tc.ctl.hist.get(context.Background())
	if err != nil {
		tc.t.Fatal(err)
	}
	return s
}

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// A borrower preempted by the owner: its record splits owned from borrowed
// GPU-seconds, counts the lost run and its grace, and the owner's record
// is all owned.
func TestHistoryRecordsPreemptedBorrower(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	borrower := tc.submit("b", 8, nil) // 4 of b's own GPUs, 4 of a's idle ones
	n.expect(api.MsgStart)
	n.report(borrower, 0, "running", 0)
	time.Sleep(50 * time.Millisecond)
	owner := tc.submit("a", 4, nil)
	n.expect(api.MsgStop)
	time.Sleep(50 * time.Millisecond) // the grace period
	n.report(borrower, 0, "exited", 271)
	n.expect(api.MsgRemove)
	n.expect(api.MsgStart) // the owner
	time.Sleep(20 * time.Millisecond)
	n.report(owner, 0, "exited", 0)
	n.expect(api.MsgRemove)
	n.expect(api.MsgStart) // the borrower again, all 8 GPUs: 4 owned, 4 borrowed
	time.Sleep(20 * time.Millisecond)
	n.report(borrower, 1, "exited", 0)
	n.expect(api.MsgRemove)
	tc.waitState(borrower, api.StateFinished)

	s := tc.store()
	b := waitRecord(t, s, borrower)
	j := tc.job(borrower)
	held := 8 * j.Used.Seconds()
	switch {
	case b.User != "alice" || b.Share != "b" || b.Partition != "gpu" || b.Outcome != acct.Completed || b.Runs != 2 ||
		b.Preemptions != 1 || b.GPUsPerNode != 8 || len(b.Allocs) != 1 || len(b.Allocs[0].GPUs) != 8:
		t.Fatalf("borrower record: %+v", b)
	case b.Eligible.IsZero() || b.Eligible.Before(b.Submit) || b.Start.Before(b.Eligible):
		t.Fatalf("borrower times: submit %v eligible %v start %v", b.Submit, b.Eligible, b.Start)
	case !nearly(b.OwnedGPUSeconds, b.BorrowedGPUSeconds) || !nearly(b.OwnedGPUSeconds+b.BorrowedGPUSeconds, held):
		t.Fatalf("borrower GPU-seconds: owned %v borrowed %v, want half each of %v", b.OwnedGPUSeconds, b.BorrowedGPUSeconds, held)
	case b.LostGPUSeconds <= 0 || b.LostGPUSeconds >= held || b.GraceGPUSeconds <= 0 || b.GraceGPUSeconds >= b.LostGPUSeconds:
		t.Fatalf("borrower lost %v grace %v (held %v)", b.LostGPUSeconds, b.GraceGPUSeconds, held)
	}
	o := waitRecord(t, s, owner)
	if o.BorrowedGPUSeconds != 0 || o.OwnedGPUSeconds <= 0 || o.LostGPUSeconds != 0 || o.Preemptions != 0 {
		t.Fatalf("owner record: %+v", o)
	}
	tc.waitRecorded(borrower)
	tc.waitRecorded(owner)
	// A deleted job that never ran.
	pending := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "h", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Hold: "u", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}})
	if resp := tc.call(api.Request{Op: api.OpDelete, IDs: []string{pending}}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if d := waitRecord(t, s, pending); d.Outcome != acct.Deleted || d.Runs != 0 || d.OwnedGPUSeconds != 0 || len(d.Allocs) != 0 {
		t.Fatalf("deleted record: %+v", d)
	}
}

// The history in PostgreSQL while PostgreSQL is down: jobs still submit,
// start and finish, their records wait (in memory and, across a crash, in
// the spool) and reach the database once it is back.
func TestHistoryWaitsForPostgres(t *testing.T) {
	pg, err := pgtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	dsn, err := pg.CreateDB(context.Background(), "sharq")
	if err != nil {
		t.Fatal(err)
	}
	old := historyMaxBackoff
	historyMaxBackoff = 200 * time.Millisecond
	defer func() { historyMaxBackoff = old }()
	tc := newTestCluster(t, []string{"n1:8"}, twoShares+fmt.Sprintf("\n[accounting]\nbackend = \"postgres\"\ndsn = %q\n", dsn))
	n := tc.attachNode("n1")
	first := tc.submit("a", 1, nil)
	n.expect(api.MsgStart)
	n.report(first, 0, "exited", 0)
	n.expect(api.MsgRemove)
	tc.waitRecorded(first)

	if err := pg.Pause(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 5 {
		id := tc.submit("a", 1, nil)
		n.expect(api.MsgStart)
		n.report(id, 0, "exited", i)
		n.expect(api.MsgRemove)
		tc.waitState(id, api.StateFinished)
		ids = append(ids, id)
	}
	if q := tc.ctl.hist.queued(); q == 0 {
		t.Fatal("no record waits while PostgreSQL is down")
	}
	// A crash while PostgreSQL is down: the records are in the spool only.
	tc.restart()
	for _, id := range ids {
		if tc.job(id).Acct.Recorded {
			t.Fatalf("job %s marked recorded while PostgreSQL was down", id)
		}
	}
	tc.submit("a", 1, nil) // the controller serves without its history
	if err := pg.Resume(); err != nil {
		t.Fatal(err)
	}
	s, err := acct.OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, id := range ids {
		r := waitRecord(t, s, id)
		if r.ExitStatus == nil || *r.ExitStatus != i {
			t.Fatalf("job %s: exit status %v, want %d", id, r.ExitStatus, i)
		}
		tc.waitRecorded(id)
	}
	if got, _ := s.Jobs(context.Background(), acct.JobFilter{}); len(got) != len(ids)+1 {
		t.Fatalf("%d records, want %d (each once)", len(got), len(ids)+1)
	}
}

// A client cannot submit its own accounting (say, a job marked recorded so
// that it never reaches the history, or free GPU-hours).
func TestSubmitClearsAccounting(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	// api.JobSpec has no such field: forge it on the wire.
	forged, _ := json.Marshal(api.Job{Name: "x", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Hold: "u", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1},
		Acct: api.Usage{Recorded: true, Owned: 1e9, Borrowed: -5, RunBorrowed: 3, Eligible: time.Unix(1, 0)}})
	resp := rawSubmit(t, tc, alice, string(forged))
	if resp.Error != nil {
		t.Fatalf("submit: %v", resp.Error)
	}
	id := resp.JobID
	if got := tc.job(id).Acct; got != (api.Usage{}) {
		t.Fatalf("submitted accounting kept: %+v", got)
	}
}

// A queue that overflows keeps the first records, drops the rest (they are
// still in the spool), and asks for the unrecorded jobs again once it has
// drained.
func TestHistoryQueueOverflow(t *testing.T) {
	old := maxQueuedRecords
	maxQueuedRecords = 3
	defer func() { maxQueuedRecords = old }()
	store, err := acct.OpenSQLite(context.Background(), t.TempDir()+"/history.db")
	if err != nil {
		t.Fatal(err)
	}
	h := newHistory(conf.Accounting{Retention: time.Hour}, store, slog.New(slog.NewTextHandler(io.Discard, nil)), newMetrics())
	recorded := make(chan []string, 10)
	replay := make(chan struct{}, 1)
	h.recorded = func(_ context.Context, ids []string) { recorded <- ids }
	h.overflowed = func(context.Context) { replay <- struct{}{} }
	var recs []acct.Record
	for i := range 5 {
		recs = append(recs, acct.Record{ID: fmt.Sprintf("%d.t", i+1), End: time.Now(), Outcome: acct.Completed})
	}
	h.add(recs...)
	if q := h.queued(); q != 3 {
		t.Fatalf("%d queued, want the bound 3", q)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case ids := <-recorded:
		if fmt.Sprint(ids) != "[1.t 2.t 3.t]" {
			t.Fatalf("recorded %v", ids)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing recorded")
	}
	select {
	case <-replay:
	case <-time.After(10 * time.Second):
		t.Fatal("the overflow never asked for a replay")
	}
	h.add(recs[3:]...) // what the loop's replay queues
	select {
	case ids := <-recorded:
		if fmt.Sprint(ids) != "[4.t 5.t]" {
			t.Fatalf("recorded after the replay %v", ids)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the replayed records were not written")
	}
}
