package ctld

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/pgtest"
)

// benchCluster fills an in-process controller with n pending jobs.
func benchCluster(b *testing.B, n int) *testCluster {
	t := &testing.T{}
	_ = t
	tc := newTestCluster(&testing.T{}, []string{"n1:8"}, twoShares)
	b.Cleanup(tc.stop)
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	spec := &api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 8}}}
	const batch = 5000
	for done := 0; done < n; done += batch {
		err := tc.ctl.do(context.Background(), func() {
			for i := 0; i < batch && done+i < n; i++ {
				if _, e := tc.ctl.submit(id, spec); e != nil {
					panic(e)
				}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return tc
}

// BenchmarkStat measures the controller's side of qstat (selection, sort,
// summary lines) over 100,000 jobs.
func BenchmarkStat(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tc := benchCluster(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var resp api.Response
				tc.ctl.do(context.Background(), func() { tc.ctl.stat(Identity{UID: 0, User: "root"}, &api.StatFilter{Summary: true}, &resp) })
				if len(resp.Summary) == 0 {
					b.Fatal("empty")
				}
			}
		})
	}
}

// BenchmarkJobCycleWithHistory runs jobs through the controller (submit,
// start on a node, exit, finish: the record queued to the history) with the
// history off, in SQLite, in PostgreSQL, and in a PostgreSQL that is
// stopped: the loop does not wait for the history, so the last two cost the
// same. submit-µs is the qsub round trip alone (durable in the spool).
func BenchmarkJobCycleWithHistory(b *testing.B) {
	pg, err := pgtest.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer pg.Stop()
	for _, mode := range []string{"off", "sqlite", "postgres", "postgres-stopped"} {
		b.Run(mode, func(b *testing.B) {
			acctTOML := ""
			switch mode {
			case "off":
				acctTOML = "\n[accounting]\nbackend = \"off\"\n"
			case "postgres", "postgres-stopped":
				dsn, err := pg.CreateDB(context.Background(), fmt.Sprintf("bench%d", time.Now().UnixNano()))
				if err != nil {
					b.Fatal(err)
				}
				acctTOML = fmt.Sprintf("\n[accounting]\nbackend = \"postgres\"\ndsn = %q\n", dsn)
			}
			tc := newTestCluster(b, []string{"n1:8"}, twoShares+acctTOML)
			n := tc.attachNode("n1")
			if mode == "postgres-stopped" {
				if err := pg.Pause(); err != nil {
					b.Fatal(err)
				}
				defer pg.Resume()
			}
			var submit time.Duration
			i := 0
			for b.Loop() {
				i++
				if i%100 == 0 {
					n.send(api.NodeMsg{Type: api.MsgHeartbeat, Node: "n1"})
				}
				t0 := time.Now()
				id := tc.submit("a", 1, nil)
				submit += time.Since(t0)
				st := n.expect(api.MsgStart).Start
				n.report(id, st.Run, "exited", 0)
				n.expect(api.MsgRemove)
			}
			b.ReportMetric(float64(submit.Microseconds())/float64(i), "submit-µs")
			if mode == "postgres-stopped" {
				b.ReportMetric(float64(tc.ctl.hist.queued()), "queued-records")
			}
		})
	}
}
