package containerd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"sort"
	"time"

	"github.com/containerd/containerd/v2/core/images"
	digest "github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// BusyboxApplets are the commands the built image links to /bin/busybox.
var BusyboxApplets = []string{
	"[", "[[", "awk", "basename", "cat", "chmod", "cp", "cut", "date", "dd",
	"df", "dirname", "echo", "env", "expr", "false", "find", "grep", "head", "hostname",
	"id", "kill", "ln", "ls", "mkdir", "mkfifo", "mv", "nproc", "printf", "ps",
	"pwd", "readlink", "rm", "rmdir", "sed", "seq", "sh", "sleep", "sort", "stat",
	"tail", "tee", "test", "timeout", "touch", "tr", "true", "uname", "uniq",
	"wc", "which", "whoami", "xargs", "yes",
}

// imageEpoch is the timestamp of every file of a built image, so that the
// same busybox binary always gives the same image digest.
var imageEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrNotStatic is returned by BuildImage for a dynamically linked busybox:
// the image has no C library to run it.
var ErrNotStatic = errors.New("busybox binary is not statically linked")

// BuildImage writes an OCI image layout tar (oci-layout, index.json, blobs)
// of a one-layer image named ref: a static busybox at /bin/busybox with
// symlinks for BusyboxApplets, /tmp (1777), minimal /etc/passwd and
// /etc/group, Env PATH and Cmd ["sh"]. The output is reproducible: the
// same busybox gives the same digests.
func BuildImage(ctx context.Context, w io.Writer, ref, busybox string) error {
	if ref == "" {
		return errors.New("build image: empty reference")
	}
	bin, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	if err := checkStatic(bin); err != nil {
		return fmt.Errorf("build image %s from %s: %w", ref, busybox, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	layer, err := busyboxLayer(bin)
	if err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	diffID := digest.FromBytes(layer)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz) // no name, zero mtime: reproducible
	if _, err := zw.Write(layer); err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	layerBlob := gz.Bytes()

	created := imageEpoch
	config := ocispec.Image{
		Created:  &created,
		Platform: ocispec.Platform{OS: "linux", Architecture: goruntime.GOARCH},
		Config: ocispec.ImageConfig{
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Cmd:        []string{"sh"},
			WorkingDir: "/",
		},
		RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{diffID}},
	}
	configBlob, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	configDesc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageConfig, Digest: digest.FromBytes(configBlob), Size: int64(len(configBlob))}
	layerDesc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayerGzip, Digest: digest.FromBytes(layerBlob), Size: int64(len(layerBlob))}
	manifest := ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    configDesc,
		Layers:    []ocispec.Descriptor{layerDesc},
	}
	manifestBlob, err := json.Marshal(manifest)
	if err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	manifestDesc := ocispec.Descriptor{
		MediaType: ocispec.MediaTypeImageManifest,
		Digest:    digest.FromBytes(manifestBlob),
		Size:      int64(len(manifestBlob)),
		Platform:  &config.Platform,
		Annotations: map[string]string{
			images.AnnotationImageName: ref,
			ocispec.AnnotationRefName:  ref,
		},
	}
	index := ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{manifestDesc},
	}
	indexBlob, err := json.Marshal(index)
	if err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	layoutBlob, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}

	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{ocispec.ImageLayoutFile, layoutBlob},
		{"index.json", indexBlob},
		{blobPath(configDesc.Digest), configBlob},
		{blobPath(layerDesc.Digest), layerBlob},
		{blobPath(manifestDesc.Digest), manifestBlob},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: imageEpoch}); err != nil {
			return fmt.Errorf("build image %s: %w", ref, err)
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: imageEpoch}); err != nil {
			return fmt.Errorf("build image %s: %w", ref, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("build image %s: %w", ref, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("build image %s: %w", ref, err)
	}
	return nil
}

func blobPath(d digest.Digest) string {
	return "blobs/" + d.Algorithm().String() + "/" + d.Encoded()
}

// checkStatic rejects binaries that need a dynamic loader.
func checkStatic(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not an ELF binary: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return ErrNotStatic
		}
	}
	return nil
}

// busyboxLayer returns the uncompressed layer tar.
func busyboxLayer(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := func(h *tar.Header) error {
		h.ModTime = imageEpoch
		h.Format = tar.FormatPAX
		return tw.WriteHeader(h)
	}
	for _, d := range []struct {
		name string
		mode int64
	}{{"bin/", 0o755}, {"etc/", 0o755}, {"home/", 0o755}, {"root/", 0o700}, {"tmp/", 0o1777}, {"usr/", 0o755}, {"usr/bin/", 0o755}, {"var/", 0o755}, {"var/tmp/", 0o1777}} {
		if err := hdr(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode}); err != nil {
			return nil, err
		}
	}
	if err := hdr(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bin))}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	applets := append([]string(nil), BusyboxApplets...)
	sort.Strings(applets)
	for _, a := range applets {
		if err := hdr(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777}); err != nil {
			return nil, err
		}
	}
	// Scripts that start with #!/usr/bin/env find it.
	if err := hdr(&tar.Header{Typeflag: tar.TypeSymlink, Name: "usr/bin/env", Linkname: "/bin/busybox", Mode: 0o777}); err != nil {
		return nil, err
	}
	etc := []struct{ name, data string }{
		{"etc/group", "root:x:0:\nusers:x:100:\nnogroup:x:65534:\n"},
		{"etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"},
	}
	for _, f := range etc {
		if err := hdr(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
