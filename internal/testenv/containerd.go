package testenv

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/internal/ctrd"
)

// StartTimeout bounds how long StartContainerd waits for the daemon.
var StartTimeout = 30 * time.Second

// Daemon is a private containerd daemon (see ctrd.Daemon): Dir holds its
// root, state, config, log and socket; Stop removes everything.
type Daemon = ctrd.Daemon

// StartContainerd starts a containerd whose files all live in dir; an empty
// dir makes a new /tmp/sharq-ctr-* directory (short, for the socket path).
// disable names more plugins to leave out (e.g.
// "io.containerd.snapshotter.v1.overlayfs"). It returns once the daemon
// answers a Version call. Stop it with Stop.
func StartContainerd(dir string, disable ...string) (*Daemon, error) {
	return ctrd.Start(context.Background(), dir, StartTimeout, disable...)
}

// Containerd starts a private containerd for tb, stops it when tb ends,
// and returns its socket.
func Containerd(tb testing.TB) (socket string) {
	tb.Helper()
	c, err := StartContainerd("")
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stop containerd: %v", err)
		}
	})
	return c.Socket
}

var nsCounter atomic.Int64

// Namespace returns a containerd namespace no other test process uses.
// runc keeps its state in /run/containerd/runc/<namespace>/<id> and the
// default cgroup path is /<namespace>/<id>, both shared by every containerd
// on the host: tests in parallel packages that reuse job and node names
// must not share a namespace.
func Namespace() string {
	return fmt.Sprintf("sharq-test-%d-%d", os.Getpid(), nsCounter.Add(1))
}
