package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

// images are the partitions' default images: the local cluster builds each
// from the host's static busybox (no registry is reachable).
func (l *layout) images() []string {
	var refs []string
	for _, p := range l.cfg.Partitions {
		if p.DefaultImage != "" && p.DefaultImage != conf.HostImage && !slices.Contains(refs, p.DefaultImage) {
			refs = append(refs, p.DefaultImage)
		}
	}
	return refs
}

// importImages builds and imports every default image into the cluster's
// namespace.
func (u *up) importImages(ctx context.Context) error {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("demo image: %w (install Debian's busybox-static)", err)
	}
	for _, ref := range u.l.images() {
		var buf bytes.Buffer
		if err := containerd.BuildImage(ctx, &buf, ref, bb); err != nil {
			if errors.Is(err, containerd.ErrNotStatic) {
				return fmt.Errorf("demo image %s: %w (install Debian's busybox-static, which replaces busybox)", ref, err)
			}
			return fmt.Errorf("demo image %s: %w", ref, err)
		}
		size := buf.Len()
		names, err := containerd.ImportImage(ctx, u.l.ctrSock, u.l.cfg.Runtime.Namespace, &buf)
		if err != nil {
			return fmt.Errorf("demo image %s: %w", ref, err)
		}
		if !slices.Contains(names, ref) {
			return fmt.Errorf("demo image: imported %v, want %s", names, ref)
		}
		u.printf("  image      %s (%d KiB, from %s)\n", ref, size/1024, bb)
	}
	return nil
}

// hostImageAllowed says whether some partition lets jobs run with image
// "host" (make up's does).
func hostImageAllowed(cfg *conf.Config) bool {
	return slices.ContainsFunc(cfg.Partitions, func(p conf.Partition) bool { return p.HostImage })
}

// mountList names the mounts jobs get, for make up's instructions.
func mountList(cfg *conf.Config) string {
	var paths []string
	for _, p := range cfg.Partitions {
		for _, m := range cfg.JobMounts(p.Name) {
			if !slices.Contains(paths, m.String()) {
				paths = append(paths, m.String())
			}
		}
	}
	if len(paths) == 0 {
		return "no site paths"
	}
	return strings.Join(paths, ", ")
}
