package containerd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"testing"

	"github.com/containerd/containerd/v2/core/images"
	digest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// readTar returns a tar's regular files and symlinks (as "-> target").
func readTar(t *testing.T, r io.Reader) (map[string][]byte, map[string]*tar.Header) {
	t.Helper()
	files := map[string][]byte{}
	hdrs := map[string]*tar.Header{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, hdrs
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = data
		hdrs[h.Name] = h
	}
}

func busyboxPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBuildImage(t *testing.T) {
	bb := busyboxPath(t)
	var a, b bytes.Buffer
	if err := BuildImage(context.Background(), &a, "example.org/bb:1", bb); err != nil {
		t.Fatal(err)
	}
	if err := BuildImage(context.Background(), &b, "example.org/bb:1", bb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two builds differ")
	}
	files, _ := readTar(t, bytes.NewReader(a.Bytes()))
	blob := func(d digest.Digest) []byte {
		data, ok := files[blobPath(d)]
		if !ok {
			t.Fatalf("blob %s missing", d)
		}
		if digest.FromBytes(data) != d {
			t.Fatalf("blob %s has digest %s", d, digest.FromBytes(data))
		}
		return data
	}
	var layout ocispec.ImageLayout
	if err := json.Unmarshal(files[ocispec.ImageLayoutFile], &layout); err != nil || layout.Version != ocispec.ImageLayoutVersion {
		t.Errorf("oci-layout %q: %v", files[ocispec.ImageLayoutFile], err)
	}
	var index ocispec.Index
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations[images.AnnotationImageName] != "example.org/bb:1" ||
		index.Manifests[0].Annotations[ocispec.AnnotationRefName] != "example.org/bb:1" {
		t.Fatalf("index = %+v", index)
	}
	var manifest ocispec.Manifest
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	var config ocispec.Image
	if err := json.Unmarshal(blob(manifest.Config.Digest), &config); err != nil {
		t.Fatal(err)
	}
	if len(config.Config.Cmd) != 1 || config.Config.Cmd[0] != "sh" || len(config.Config.Env) != 1 || len(manifest.Layers) != 1 {
		t.Errorf("config %+v, manifest %+v", config.Config, manifest)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0].Digest)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if digest.FromBytes(raw) != config.RootFS.DiffIDs[0] {
		t.Error("layer diff id does not match")
	}
	layer, hdrs := readTar(t, bytes.NewReader(raw))
	if h := hdrs["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("tmp/ = %+v, want mode 1777", h)
	}
	if len(layer["bin/busybox"]) == 0 || hdrs["bin/busybox"].Mode != 0o755 {
		t.Error("no executable bin/busybox")
	}
	for _, applet := range append([]string{"sh", "cat", "sleep", "["}, BusyboxApplets...) {
		if h := hdrs["bin/"+applet]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
			t.Errorf("bin/%s = %+v, want symlink to busybox", applet, h)
		}
	}
	for _, f := range []string{"etc/passwd", "etc/group"} {
		if !bytes.HasPrefix(layer[f], []byte("root:x:0:")) {
			t.Errorf("%s = %q", f, layer[f])
		}
	}
}

func TestBuildImageRejects(t *testing.T) {
	sh, err := exec.LookPath("sh") // dash or bash: dynamically linked
	if err != nil {
		t.Fatal(err)
	}
	if err := BuildImage(context.Background(), io.Discard, "x", sh); !errors.Is(err, ErrNotStatic) {
		t.Errorf("dynamic binary: %v, want ErrNotStatic", err)
	}
	if err := BuildImage(context.Background(), io.Discard, "", busyboxPath(t)); err == nil {
		t.Error("empty ref accepted")
	}
	if err := BuildImage(context.Background(), io.Discard, "x", "/etc/passwd"); err == nil {
		t.Error("non-ELF accepted")
	}
}
