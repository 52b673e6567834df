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
