//go:build !unit

package noded_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// A start order for a GPU whose fault the controller has not read yet
// (no acknowledged message carried it) is refused as the node's failure
// of a GPU (NodeFault, GPUFault), while a start on a healthy GPU runs;
// once the controller has read the fault, a start it orders on the GPU
// all the same (an admin cleared it) goes ahead.
func TestStartRefusedOnUnreadGPUFault(t *testing.T) {
	e := newEnv(t, "n1")
	fault := api.GPUFault{Index: 1, Kind: api.GPUFaultXid, Xid: 79, Fatal: true,
		Reason: "Xid 79: GPU has fallen off the bus", Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	sick := make(chan struct{})
	e.ctl.lease = time.Minute // acknowledgements come with a lease
	e.run(t, "n1", func(o *noded.Options) {
		o.WatchGPUs = func(ctx context.Context, h *gpu.Health, _ time.Duration, _ *slog.Logger) error {
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
	p.setAcking(false)
	close(sick)
	p.await(t, "a heartbeat with the fault", func([]api.JobStateMsg, int, bool) bool { return len(p.gpuFaults) == 1 })

	refused := e.order(t, "160.t", "sleep 30", 1, 2)
	p.start(t, refused)
	if st := p.state(t, "160.t", "failed"); !st.NodeFault || !st.GPUFault || !strings.Contains(st.Error, "GPU 1 of n1 is unhealthy (Xid 79") {
		t.Fatalf("refusal %+v, want the node's GPU fault", st)
	}
	healthy := e.order(t, "161.t", "sleep 30", 2)
	p.start(t, healthy)
	p.state(t, "161.t", "running")

	p.setAcking(true)
	var beats int
	p.await(t, "a heartbeat", func(_ []api.JobStateMsg, b int, _ bool) bool { beats = b; return true })
	p.await(t, "an acknowledged heartbeat with the fault", func(_ []api.JobStateMsg, b int, _ bool) bool { return b > beats })
	cleared := e.order(t, "162.t", "sleep 30", 1)
	p.start(t, cleared)
	p.state(t, "162.t", "running")
	for _, id := range []string{"161.t", "162.t"} {
		p.stop(t, id, 0, api.StopDeleted)
		p.state(t, id, "exited")
	}
}
