//go:build !unit

package containerd_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"

	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
	"github.com/sharq-hpc/sharq/runtime/runtimetest"
)

// The package's containerd tests share one private daemon, started by
// TestMain, and one namespace with the test image in it.
var (
	socket    string
	namespace string
	image     string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	start := time.Now()
	d, err := testenv.StartContainerd("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := d.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop containerd:", err)
		}
	}()
	started := time.Since(start)
	socket = d.Socket
	namespace = testenv.Namespace()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	image, err = testenv.BusyboxImage(ctx, socket, namespace)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testing.Verbose() {
		snap := "?"
		if cl, err := client.New(socket); err == nil {
			snap, _ = containerd.DetectSnapshotter(namespaces.WithNamespace(ctx, namespace), cl)
			cl.Close()
		}
		fmt.Fprintf(os.Stderr, "containerd up in %v, image imported in %v, snapshotter %s\n",
			started.Round(time.Millisecond), (time.Since(start) - started).Round(time.Millisecond), snap)
	}
	return m.Run()
}

// newRuntime connects a runtime for node to the test daemon.
func newRuntime(t testing.TB, node string) *containerd.Containerd {
	t.Helper()
	rt, err := containerd.NewContainerd(context.Background(), socket, namespace, containerd.WithNode(node),
		containerd.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func TestConformance(t *testing.T) {
	for _, user := range []struct {
		name     string
		uid, gid uint32
	}{{"user", 1000, 1000}, {"root", 0, 0}} {
		t.Run(user.name, func(t *testing.T) {
			node := "conf-" + user.name
			runtimetest.Run(t, func(t *testing.T) runtime.Runtime { return newRuntime(t, node) }, runtimetest.Env{
				Image: image, Node: node, UID: user.uid, GID: user.gid,
			})
		})
	}
}
