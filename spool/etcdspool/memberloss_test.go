package etcdspool_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/spool"
	"github.com/sharq-hpc/sharq/spool/etcdspool"
	"github.com/sharq-hpc/sharq/spool/etcdspool/etcdtest"
)

// Losing one member of three, the raft leader or not, fails no write
// under the default timeout: a write whose connection broke, or whose
// proposal died with the raft leader, is sent again, and every record
// written is there.
func TestMemberLoss(t *testing.T) {
	for _, victim := range []string{"raft leader", "follower"} {
		t.Run(victim, func(t *testing.T) {
			ms := etcdtest.StartCluster(t, 3)
			cli := etcdtest.Client(t, etcdtest.Endpoints(ms))
			ctx := context.Background()
			s, err := etcdspool.Open(ctx, cli, etcdspool.Options{Prefix: "/sharq/loss/", Timeout: etcdspool.DefaultTimeout})
			if err != nil {
				t.Fatal(err)
			}
			var written atomic.Int64
			stop := make(chan struct{})
			errc := make(chan error, 1)
			go func() {
				for i := 1; ; i++ {
					select {
					case <-stop:
						errc <- nil
						return
					default:
					}
					if err := s.Put(ctx, spool.Record{ID: fmt.Sprintf("%d.lab", i), Data: []byte{byte(i)}}); err != nil {
						errc <- fmt.Errorf("put %d: %w", i, err)
						return
					}
					written.Store(int64(i))
				}
			}()
			waitWritten := func(n int64) {
				t.Helper()
				for written.Load() < n {
					select {
					case err := <-errc:
						t.Fatalf("after %d writes: %v", written.Load(), err)
					case <-time.After(time.Millisecond):
					}
				}
			}
			waitWritten(20)
			k := etcdtest.Leader(ms)
			if victim == "follower" {
				k = (k + 1) % len(ms)
			}
			ms[k].Stop()
			lost := written.Load()
			waitWritten(lost + 50)
			close(stop)
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			n := int64(0)
			if err := s.Scan(ctx, func(r spool.Record) error { n++; return nil }); err != nil || n < lost+50 {
				t.Fatalf("Scan: %d records, %v; want at least %d", n, err, lost+50)
			}
			if _, err := s.NextIDs(ctx, 1); err != nil {
				t.Fatalf("NextIDs with a member lost: %v", err)
			}
		})
	}
}
