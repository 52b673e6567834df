//go:build !unit

package containerd_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

// benchRuntime is a runtime for node that counts its daemon calls, and a
// directory of uid 1000 for the jobs' output.
func benchRuntime(b *testing.B, node string) (*containerd.Containerd, *atomic.Int64, string) {
	b.Helper()
	calls := new(atomic.Int64)
	rt, err := containerd.NewContainerd(context.Background(), socket, namespace, containerd.WithNode(node),
		containerd.WithLogger(slog.New(slog.DiscardHandler)), containerd.WithCallCounter(calls))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	dir, err := os.MkdirTemp("", "sharq-bench-") // reachable by uid 1000 (not b.TempDir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, 1000, 1000); err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	return rt, calls, dir
}

// lifecycle is what the node daemon does for one job that exits at once:
// Start, Wait, OOMKilled, Remove.
func lifecycle(ctx context.Context, rt runtime.Runtime, dir, name string) error {
	s := userSpec("bench", dir, name, "true")
	s.Node = ""
	s.Stderr = filepath.Join(dir, name+".err")
	if err := rt.Start(ctx, s); err != nil {
		return err
	}
	if code, err := rt.Wait(ctx, s.JobID); code != 0 || err != nil {
		return fmt.Errorf("wait %s: %d %v", s.JobID, code, err)
	}
	if _, err := rt.OOMKilled(ctx, s.JobID); err != nil {
		return err
	}
	return rt.Remove(ctx, s.JobID)
}

// BenchmarkJobLifecycle measures one job at a time (uid 1000, separate
// stdout and stderr): wall time and daemon calls per job.
func BenchmarkJobLifecycle(b *testing.B) {
	rt, calls, dir := benchRuntime(b, "bench")
	ctx := context.Background()
	i := 0
	calls.Store(0)
	for b.Loop() {
		i++
		if err := lifecycle(ctx, rt, dir, fmt.Sprintf("b%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(calls.Load())/float64(b.N), "calls/op")
}

// BenchmarkJobDrain measures jobs run as a node with eight GPUs drains a
// queue of one-GPU no-op jobs: eight lifecycles at a time. ns/op is the
// node's throughput (wall time per job).
func BenchmarkJobDrain(b *testing.B) {
	rt, calls, dir := benchRuntime(b, "bench")
	ctx := context.Background()
	var next atomic.Int64
	calls.Store(0)
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				if err := lifecycle(ctx, rt, dir, fmt.Sprintf("d%d", i)); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(calls.Load())/float64(b.N), "calls/op")
}
