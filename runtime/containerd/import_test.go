//go:build !unit

package containerd_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

func buildImage(t *testing.T, ref string) []byte {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := containerd.BuildImage(context.Background(), &buf, ref, bb); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// stripNames rewrites an image layout tar without the index's annotations.
func stripNames(t *testing.T, in []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	tr := tar.NewReader(bytes.NewReader(in))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "index.json" {
			var idx ocispec.Index
			if err := json.Unmarshal(data, &idx); err != nil {
				t.Fatal(err)
			}
			for i := range idx.Manifests {
				idx.Manifests[i].Annotations = nil
			}
			if data, err = json.Marshal(idx); err != nil {
				t.Fatal(err)
			}
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestImportImage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := testenv.Namespace()
	const ref = "sharq.test/imported:v1"
	tarball := buildImage(t, ref)
	names, err := containerd.ImportImage(ctx, socket, ns, bytes.NewReader(tarball))
	if err != nil || len(names) != 1 || names[0] != ref {
		t.Fatalf("ImportImage = %v, %v, want [%s]", names, err, ref)
	}
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
	snap, err := containerd.DetectSnapshotter(nctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := img.IsUnpacked(nctx, snap); !ok || err != nil {
		t.Errorf("image not unpacked for %s: %v", snap, err)
	}
	// Importing again is fine (same names).
	if names, err := containerd.ImportImage(ctx, socket, ns, bytes.NewReader(tarball)); err != nil || len(names) != 1 {
		t.Errorf("second import: %v, %v", names, err)
	}
	if _, err := containerd.ImportImage(ctx, socket, ns, bytes.NewReader(stripNames(t, tarball))); !errors.Is(err, containerd.ErrNoImageName) {
		t.Errorf("archive without names: %v, want ErrNoImageName", err)
	}
	if _, err := containerd.ImportImage(ctx, socket, ns, bytes.NewReader([]byte("not a tar"))); err == nil {
		t.Error("garbage imported")
	}
}

// TestNativeSnapshotter runs a job on a daemon without overlayfs: import
// and containers fall back to the native snapshotter.
func TestNativeSnapshotter(t *testing.T) {
	t.Parallel()
	d, err := testenv.StartContainerd("", "io.containerd.snapshotter.v1.overlayfs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := testenv.Namespace()
	ref, err := testenv.BusyboxImage(ctx, d.Socket, ns)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := containerd.NewContainerd(ctx, d.Socket, ns, containerd.WithNode("native"), containerd.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Snapshotter() != "native" {
		t.Errorf("snapshotter %s, want native", rt.Snapshotter())
	}
	dir := jobDir(t, 1000, 1000)
	s := userSpec("native", dir, "native", "echo hi; exit 3")
	s.Image = ref
	if code, out := runJob(t, rt, s); code != 3 || out != "hi\n" {
		t.Errorf("job: %d, %q", code, out)
	}
}
