package containerd

import (
	"context"
	"errors"
	"fmt"

	"github.com/containerd/containerd/v2/client"
)

// Snapshotters in order of preference: overlayfs where the daemon's
// plugin initialised (kernel overlay support, a backing filesystem with
// d_type), else native (plain copies, works everywhere).
var Snapshotters = []string{"overlayfs", "native"}

// ErrNoSnapshotter means the daemon has none of Snapshotters working.
var ErrNoSnapshotter = errors.New("containerd has no usable snapshotter (overlayfs, native)")

// DetectSnapshotter returns the first of Snapshotters whose plugin the
// daemon loaded without error. Image import (unpack) and container creation
// both use it, so they always agree.
func DetectSnapshotter(ctx context.Context, c *client.Client) (string, error) {
	resp, err := c.IntrospectionService().Plugins(ctx, "type==io.containerd.snapshotter.v1")
	if err != nil {
		return "", fmt.Errorf("list snapshotter plugins: %w", err)
	}
	ok := map[string]bool{}
	for _, p := range resp.GetPlugins() {
		if p.GetInitErr() == nil {
			ok[p.GetID()] = true
		}
	}
	for _, s := range Snapshotters {
		if ok[s] {
			return s, nil
		}
	}
	return "", ErrNoSnapshotter
}
