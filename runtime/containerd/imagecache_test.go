//go:build !unit

package containerd_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/opencontainers/image-spec/identity"

	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

// A start prepares its image once per digest (imagecache.go). When the
// image's unpacked layers disappear after that (an admin pruned them), the
// next start unpacks them again instead of failing: the job is not blamed
// for the node's state. The test has its own namespace, so its image's
// snapshots are its own.
func TestStartAfterUnpackedImageRemoved(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := testenv.Namespace()
	ref, err := testenv.BusyboxImage(ctx, socket, ns)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := containerd.NewContainerd(ctx, socket, ns, containerd.WithNode("prune"),
		containerd.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	run := func(name string) {
		t.Helper()
		s := userSpec("prune", dir, name, "echo ran")
		s.Image = ref
		if code, out := runJob(t, rt, s); code != 0 || out != "ran\n" {
			t.Fatalf("job %s: exit %d, output %q", name, code, out)
		}
	}
	run("first") // prepares the image

	cl, err := client.New(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	nctx := namespaces.WithNamespace(ctx, ns)
	img, err := cl.GetImage(nctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	diffIDs, err := img.RootFS(nctx)
	if err != nil {
		t.Fatal(err)
	}
	snaps := cl.SnapshotService(rt.Snapshotter())
	// Top layer first: a parent cannot go while a child exists.
	for i := len(diffIDs); i > 0; i-- {
		if err := snaps.Remove(nctx, identity.ChainID(diffIDs[:i]).String()); err != nil {
			t.Fatalf("remove the unpacked layer %d: %v", i, err)
		}
	}
	if ok, err := img.IsUnpacked(nctx, rt.Snapshotter()); err != nil || ok {
		t.Fatalf("image still unpacked after the removal: %v, %v", ok, err)
	}

	run("second") // the cached preparation is stale: prepared again
	if ok, err := img.IsUnpacked(nctx, rt.Snapshotter()); err != nil || !ok {
		t.Errorf("image not unpacked again: %v, %v", ok, err)
	}
}
