//go:build !unit

package noded_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// A fault the GPU watch finds goes to the controller in a heartbeat sent
// at once, and in every heartbeat and hello after it.
func TestGPUFaultReported(t *testing.T) {
	e := newEnv(t, "n1")
	fault := api.GPUFault{Index: 1, UUID: "GPU-1", Kind: api.GPUFaultXid, Xid: 79, Fatal: true,
		Reason: "Xid 79: GPU has fallen off the bus", Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	sick := make(chan struct{})
	watched := make(chan time.Duration, 1)
	e.run(t, "n1", func(o *noded.Options) {
		o.WatchGPUs = func(ctx context.Context, h *gpu.Health, interval time.Duration, _ *slog.Logger) error {
			watched <- interval
			select {
			case <-sick:
				h.Add(fault)
			case <-ctx.Done():
			}
			<-ctx.Done()
			return nil
		}
	})
	p := e.ctl.accept(t)
	if len(p.hello.GPUFaults) != 0 {
		t.Fatalf("hello of healthy GPUs: %+v", p.hello.GPUFaults)
	}
	if iv := <-watched; iv <= 0 {
		t.Errorf("GPUs checked every %v", iv)
	}
	close(sick)
	p.await(t, "a heartbeat with the fault", func([]api.JobStateMsg, int, bool) bool {
		return len(p.gpuFaults) == 1 && p.gpuFaults[0] == fault
	})
	p.conn.Close()
	if p1 := e.ctl.accept(t); len(p1.hello.GPUFaults) != 1 || p1.hello.GPUFaults[0] != fault {
		t.Fatalf("hello after the fault: %+v", p1.hello.GPUFaults)
	}
}

// The node health program runs before the first hello: a failure is the
// node's health in it, with the program's first line; once the program
// passes, a heartbeat says the node is healthy again, and a new failure
// comes back in the next one.
func TestHealthCheckProgram(t *testing.T) {
	e := newEnv(t, "n1")
	dir := t.TempDir()
	flag := filepath.Join(dir, "broken")
	if err := os.WriteFile(flag, []byte("ERROR: nhc: /scratch is not mounted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "check")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n[ -e "+flag+" ] || exit 0\ncat "+flag+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.cfg.Runtime.HealthCheck, e.cfg.Runtime.HealthCheckInterval = prog, 50*time.Millisecond
	e.run(t, "n1")
	p := e.ctl.accept(t)
	if want := "HealthCheck: ERROR: nhc: /scratch is not mounted"; p.hello.Health != want {
		t.Fatalf("hello: health %q, want %q", p.hello.Health, want)
	}
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	p.await(t, "a healthy heartbeat", func(_ []api.JobStateMsg, beats int, _ bool) bool { return beats > 0 && p.health == "" })
	if err := os.WriteFile(flag, []byte("\n  disk full\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.await(t, "an unhealthy heartbeat", func([]api.JobStateMsg, int, bool) bool { return p.health == "HealthCheck: disk full" })
}

// fakeSampler says GPU i is (10*i)% busy and uses i GiB.
type fakeSampler struct {
	mu     sync.Mutex
	asked  [][]int
	closed bool
}

func (f *fakeSampler) Sample(idx []int) ([]gpu.Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, slices.Clone(idx))
	var out []gpu.Sample
	for _, i := range idx {
		out = append(out, gpu.Sample{Index: i, Util: uint32(10 * i), MemUsed: uint64(i) << 30})
	}
	return out, nil
}

func (f *fakeSampler) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// A running job's GPUs are sampled, and its use rides on the heartbeats
// until it ends.
func TestGPUUseSampled(t *testing.T) {
	e := newEnv(t, "n1")
	e.cfg.Runtime.GPUSampleInterval = 20 * time.Millisecond
	f := &fakeSampler{}
	d := e.run(t, "n1", func(o *noded.Options) {
		o.OpenSampler = func() (noded.GPUSampler, error) { return f, nil }
	})
	p := e.ctl.accept(t)
	p.start(t, e.order(t, "70.t", "exec sleep 1000\n", 1, 3))
	p.state(t, "70.t", "running")
	p.await(t, "a heartbeat with 70.t's GPU use", func([]api.JobStateMsg, int, bool) bool {
		return len(p.gpuUse) == 1 && p.gpuUse[0].Samples >= 2
	})
	p.mu.Lock()
	u := p.gpuUse[0]
	p.mu.Unlock()
	if u.JobID != "70.t" || u.Run != 0 || u.MeanUtil != 20 || u.RecentUtil != 20 || u.RecentMaxUtil != 30 || u.PeakMemBytes != 4<<30 || u.MemBytes != 4<<30 {
		t.Errorf("use %+v, want 70.t at 20%% with 4 GiB", u)
	}
	f.mu.Lock()
	if !slices.Equal(f.asked[0], []int{1, 3}) {
		t.Errorf("sampled GPUs %v, want the job's 1 and 3", f.asked[0])
	}
	f.mu.Unlock()
	p.stop(t, "70.t", 0, api.StopDeleted)
	p.state(t, "70.t", "exited")
	p.await(t, "a heartbeat without 70.t", func(_ []api.JobStateMsg, _ int, _ bool) bool { return len(p.gpuUse) == 0 })
	d.stop(t)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		t.Error("the sampler was not closed")
	}
}
