package containerd

import (
	"context"
	"fmt"

	v1 "github.com/containerd/containerd/v2/core/metrics/types/v1"
	v2 "github.com/containerd/containerd/v2/core/metrics/types/v2"
	"github.com/containerd/errdefs"
	"github.com/containerd/typeurl/v2"
)

// OOMKilled tells whether the kernel's OOM killer has killed a process of
// the job's container: the oom_kill count of its memory cgroup (cgroup v2
// memory.events, v1 memory.oom_control), read through containerd's task
// metrics. The cgroup lives until Remove, so the answer survives a restart
// of the node daemon. A container without a task answers false.
func (c *Containerd) OOMKilled(ctx context.Context, jobID string) (bool, error) {
	ctx = c.nsctx(ctx)
	ctr, err := c.load(ctx, jobID)
	if err != nil {
		return false, fmt.Errorf("oom: %w", err)
	}
	task, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("oom job %s: %w", jobID, err)
	}
	m, err := task.Metrics(ctx)
	if errdefs.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("oom job %s: metrics: %w", jobID, err)
	}
	v, err := typeurl.UnmarshalAny(m.Data)
	if err != nil {
		return false, fmt.Errorf("oom job %s: metrics: %w", jobID, err)
	}
	switch v := v.(type) {
	case *v1.Metrics:
		return v.GetMemoryOomControl().GetOomKill() > 0, nil
	case *v2.Metrics:
		return v.GetMemoryEvents().GetOomKill() > 0, nil
	}
	return false, fmt.Errorf("oom job %s: metrics of type %T", jobID, v)
}
