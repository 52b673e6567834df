package containerd

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// privateTmp are the world-writable host directories a host-rootfs job
// gets as its own, empty, tmpfs: what one job leaves there no other sees.
var privateTmp = []string{"/tmp", "/var/tmp"}

// hostRootDir makes the (empty, root-owned) directory a host-rootfs
// container's root path names.
func hostRootDir(dir string) error {
	if err := os.MkdirAll(dir, 0o555); err != nil {
		return fmt.Errorf("host root: %w", err)
	}
	return nil
}

// hostRootOpts turn the spec into one whose root is the host's. The host's
// / is bind-mounted recursively over the root path with "rro": read-only
// at every level (mount_setattr), a separate /var or /home included. runc
// makes the container's own /proc, /dev, /sys and /run on top of it as for
// any image, then the private /tmp and /var/tmp, then the job's binds
// (submit directory, output, configured mounts), which keep their own
// read-write or read-only mode.
func hostRootOpts(dir string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Root == nil {
			s.Root = &specs.Root{}
		}
		s.Root.Path, s.Root.Readonly = dir, true
		mounts := []specs.Mount{{Type: "bind", Source: "/", Destination: "/", Options: []string{"rbind", "rro", "nosuid"}}}
		tmps := make([]specs.Mount, 0, len(privateTmp))
		for _, d := range privateTmp {
			tmps = append(tmps, specs.Mount{Type: "tmpfs", Source: "tmpfs", Destination: d,
				Options: []string{"nosuid", "nodev", "mode=1777"}})
		}
		placed := false
		for _, m := range s.Mounts {
			if !placed && !isKernelMount(m.Destination) {
				mounts = append(mounts, tmps...)
				placed = true
			}
			if m.Type == "sysfs" {
				// The host's sysfs is already at /sys (the root is bound
				// recursively), and the kernel refuses to stack a
				// superblock on its own root (EBUSY): an empty tmpfs goes
				// between them.
				mounts = append(mounts, specs.Mount{Type: "tmpfs", Source: "tmpfs", Destination: m.Destination,
					Options: []string{"nosuid", "noexec", "nodev", "mode=755", "size=4k"}})
			}
			mounts = append(mounts, m)
		}
		if !placed {
			mounts = append(mounts, tmps...)
		}
		s.Mounts = mounts
		return nil
	}
}

// isKernelMount: a mount the default spec makes for the container itself.
func isKernelMount(dest string) bool {
	return slices.ContainsFunc([]string{"/proc", "/dev", "/sys", "/run"}, func(p string) bool { return below(dest, p) })
}

// below reports whether path p is dir or inside it.
func below(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}
