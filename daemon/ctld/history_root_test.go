//go:build !unit

package ctld

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/pgtest"
)

// A borrower preempted by the owner: its record splits owned from borrowed
// GPU-seconds, counts the lost run and its grace, and the owner's record
// is all owned.
func TestHistoryRecordsPreemptedBorrower(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	borrower := tc.submit("b", 8, nil) // 4 of b's own GPUs, 4 of a's idle ones
	n.expect(api.MsgStart)
	n.report(borrower, 0, "running", 0)
	tc.advance(50 * time.Millisecond) // the controller's clock: the run holds GPUs a while
	owner := tc.submit("a", 4, nil)
	n.expect(api.MsgStop)
	tc.advance(50 * time.Millisecond) // the grace period
	n.report(borrower, 0, "exited", 271)
	n.expect(api.MsgRemove)
	n.expect(api.MsgStart) // the owner
	tc.advance(20 * time.Millisecond)
	n.report(owner, 0, "exited", 0)
	n.expect(api.MsgRemove)
	n.expect(api.MsgStart) // the borrower again, all 8 GPUs: 4 owned, 4 borrowed
	tc.advance(20 * time.Millisecond)
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
