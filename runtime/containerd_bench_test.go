package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkJobLifecycle measures Start, Wait and Remove of a job that
// exits at once (uid 1000, separate stdout and stderr).
func BenchmarkJobLifecycle(b *testing.B) {
	rt := newRuntime(b, "bench")
	defer rt.Close()
	dir, err := os.MkdirTemp("", "sharq-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chown(dir, 1000, 1000); err != nil {
		b.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		s := userSpec("bench", dir, fmt.Sprintf("b%d", i), "true")
		s.Stderr = filepath.Join(dir, fmt.Sprintf("b%d.err", i))
		if err := rt.Start(ctx, s); err != nil {
			b.Fatal(err)
		}
		if code, err := rt.Wait(ctx, s.JobID); code != 0 || err != nil {
			b.Fatal(code, err)
		}
		if err := rt.Remove(ctx, s.JobID); err != nil {
			b.Fatal(err)
		}
	}
}
