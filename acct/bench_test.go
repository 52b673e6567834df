//go:build !unit

package acct_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/acct"
)

func benchRecord(i int) acct.Record {
	return acct.Record{ID: fmt.Sprintf("%d.lab", i), Seq: uint64(i), Name: "train", User: fmt.Sprintf("user%d", i%50),
		Share: "vision", Partition: "gpu", Nodes: 1, GPUsPerNode: 2, Allocs: []acct.Alloc{{Node: "gpu01", GPUs: []int{0, 1}}},
		Submit: time.UnixMilli(int64(i) * 1000), Start: time.UnixMilli(int64(i)*1000 + 10), End: time.UnixMilli(int64(i)*1000 + 100),
		Outcome: acct.Completed, ExitStatus: new(int), OwnedGPUSeconds: 100, Runs: 1}
}

// typicalDetail is a job's detail as a batch job has it: a 2 KiB script,
// 40 environment variables, six events.
var typicalDetail = func() acct.Detail {
	d := acct.Detail{Script: "#!/bin/bash\n" + strings.Repeat("python train.py --epochs 10 --lr 0.001 # comment\n", 40),
		Env: map[string]string{}, WorkDir: "/home/user/exp", Stdout: "/home/user/exp/train.o1", Stderr: "/home/user/exp/train.e1"}
	for i := range 40 {
		d.Env[fmt.Sprintf("PBS_VAR_%d", i)] = "/some/path/value/of/moderate/length"
	}
	for _, w := range []string{"submitted", "eligible", "started on gpu01 [0 1]", "running", "exited 0", "finished"} {
		d.Events = append(d.Events, acct.Event{Time: time.UnixMilli(1000), State: "R", What: w})
	}
	return d
}()

// benchStores opens an empty store of each backend.
func benchStores(b *testing.B) map[string]acct.Store {
	ctx := context.Background()
	sl, err := acct.OpenSQLite(ctx, filepath.Join(b.TempDir(), "history.db"))
	if err != nil {
		b.Fatal(err)
	}
	pgs, err := acct.OpenPostgres(ctx, newPGDB(b))
	if err != nil {
		b.Fatal(err)
	}
	return map[string]acct.Store{"sqlite": sl, "postgres": pgs}
}

// BenchmarkRecord is the cost of recording finished jobs, in batches as
// the controller's writer sends them (a batch is what finished while the
// previous one was written).
func BenchmarkRecord(b *testing.B) {
	for name, s := range benchStores(b) {
		for _, bc := range []struct {
			batch  int
			detail bool
		}{{1, false}, {100, false}, {1, true}, {100, true}} {
			b.Run(fmt.Sprintf("%s/batch=%d/detail=%v", name, bc.batch, bc.detail), func(b *testing.B) {
				n := 0
				recs := make([]acct.Record, bc.batch)
				for b.Loop() {
					for k := range recs {
						n++
						recs[k] = benchRecord(n)
						if bc.detail {
							recs[k].Detail = typicalDetail
						}
					}
					if err := s.Record(context.Background(), recs...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n), "µs/job")
			})
		}
		s.Close()
	}
}

// fill inserts n history rows with SQL on the server side (a recursive
// CTE; PostgreSQL and SQLite both have them): 50 users, 3 shares, one job
// a second; then their hourly sums, as Record keeps them.
func fill(b *testing.B, db *sql.DB, n int) {
	q := `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ` + fmt.Sprint(n) + `)
		INSERT INTO jobs (id, seq, name, user_name, uid, gid, share, part, nodes, gpus_per_node, cpus_per_node,
			mem_per_node, walltime_ms, allocs, submit_ms, eligible_ms, start_ms, end_ms, used_ms, runs, preemptions,
			exit_status, outcome, reason, owned_gs, borrowed_gs, lost_gs, grace_gs)
		SELECT i || '.lab', i, 'job', 'user' || (i % 50), 1000, 1000,
			CASE i % 3 WHEN 0 THEN 'vision' WHEN 1 THEN 'nlp' ELSE 'infra' END, 'gpu', 1, 2, 0, 0, 0, 'gpu01:0,1',
			i * 1000, i * 1000, i * 1000 + 10, i * 1000 + 500, 490, 1, i % 2, 0, 'completed', '',
			i % 1000, i % 7, i % 3, 0 FROM g`
	if _, err := db.Exec(q); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO usage_hourly (hour_ms, user_name, share, part, jobs, owned_gs, borrowed_gs, lost_gs,
			grace_gs, preemptions)
		SELECT (end_ms / 3600000) * 3600000, user_name, share, part, COUNT(*), SUM(owned_gs), SUM(borrowed_gs),
			SUM(lost_gs), SUM(grace_gs), SUM(preemptions)
		FROM jobs GROUP BY (end_ms / 3600000) * 3600000, user_name, share, part`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUsageByUser1M is `sharqctl report usage --by user` over
// 1,000,000 history rows (all in the period, which starts and ends inside
// an hour: the hourly sums and the rows of both partial hours are read).
func BenchmarkUsageByUser1M(b *testing.B) {
	const rows = 1_000_000
	ctx := context.Background()
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			var s acct.Store
			var db *sql.DB
			if name == "sqlite" {
				path := filepath.Join(b.TempDir(), "history.db")
				sl, err := acct.OpenSQLite(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				s = sl
				if db, err = sql.Open("sqlite", path); err != nil {
					b.Fatal(err)
				}
			} else {
				dsn := newPGDB(b)
				pgs, err := acct.OpenPostgres(ctx, dsn)
				if err != nil {
					b.Fatal(err)
				}
				s, db = pgs, pgs.DB()
			}
			defer s.Close()
			fill(b, db, rows)
			q := acct.UsageQuery{Start: time.UnixMilli(1), End: time.UnixMilli(int64(rows+1)*1000 - 1), By: acct.ByUser}
			for b.Loop() {
				got, err := s.Usage(ctx, q)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) != 50 {
					b.Fatalf("%d users, want 50", len(got))
				}
			}
		})
	}
}
