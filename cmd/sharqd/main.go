// Command sharqd is sharq's node daemon: it connects to the controller and
// runs the jobs it is given as containerd containers; see noded.Main.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

func main() { os.Exit(noded.Main(os.Args, newContainerd)) }

// newContainerd is the node's runtime: containerd at the configured socket
// and namespace. containerd down at start is no error: sharqd connects
// and says it is unhealthy (WithLazyDaemon).
func newContainerd(ctx context.Context, cfg *conf.Config, node string, log *slog.Logger) (runtime.Runtime, error) {
	return containerd.NewContainerd(ctx, cfg.Runtime.ContainerdSocket, cfg.Runtime.Namespace,
		containerd.WithNode(node), containerd.WithLogger(log.With("node", node)), containerd.WithLazyDaemon())
}
