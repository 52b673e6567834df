package ctld

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// newSpoolCluster is an in-process controller on bbolt, or on an
// in-process etcd member ("etcd"), with no node.
func newSpoolCluster(b *testing.B, backend string) *testCluster {
	b.Helper()
	shares, keys := twoShares, ""
	if backend == "etcd" {
		m := etcdtest.Start(b)
		shares, keys = twoShares+haTOML(m.ClientURL), `spool = "etcd"`
	}
	tc := prepareTestCluster(b, []string{"n1:8"}, shares, keys, Limits{})
	tc.start()
	b.Cleanup(tc.stop)
	return tc
}

var benchSpec = &api.SubmitSpec{Job: api.JobSpec{Name: "j", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
	Resources: api.Resources{Nodes: 1, GPUsPerNode: 8}}}

// BenchmarkSubmitSpool: acknowledged submissions per second with 1, 16 and
// 64 concurrent clients, each waiting for its job to be durable (the
// loop's group commit), on bbolt and on etcd. The socket and the client
// process are not in it (see BenchmarkSubmitToStart in e2e).
func BenchmarkSubmitSpool(b *testing.B) {
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	for _, backend := range []string{"bbolt", "etcd"} {
		for _, clients := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", backend, clients), func(b *testing.B) {
				tc := newSpoolCluster(b, backend)
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				per := (b.N + clients - 1) / clients
				for c := 0; c < clients; c++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < per; i++ {
							var e *api.Error
							if err := tc.ctl.do(context.Background(), func() { _, e = tc.ctl.submit(id, benchSpec) }); err != nil || e != nil {
								b.Error(err, e)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.ReportMetric(float64(per*clients)/time.Since(start).Seconds(), "submits/s")
			})
		}
	}
}

// BenchmarkRestore: how long a new controller (a new leader on etcd) takes
// to restore 100,000 pending jobs, from New to ready.
func BenchmarkRestore(b *testing.B) {
	id := Identity{UID: 1000, GID: 1000, User: "alice"}
	for _, backend := range []string{"bbolt", "etcd"} {
		b.Run(backend, func(b *testing.B) {
			tc := newSpoolCluster(b, backend)
			const n, batch = 100000, 2000
			for done := 0; done < n; done += batch {
				err := tc.ctl.do(context.Background(), func() {
					for i := 0; i < batch; i++ {
						if _, e := tc.ctl.submit(id, benchSpec); e != nil {
							panic(e)
						}
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			tc.stop()
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				c, err := New(ctx, Options{ConfigPath: tc.conf, Logger: log})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if len(c.jobs) != n {
					b.Fatalf("restored %d jobs, want %d", len(c.jobs), n)
				}
				done := make(chan error, 1)
				go func() { done <- c.Run(ctx) }()
				cancel()
				<-done
				b.StartTimer()
			}
		})
	}
}
