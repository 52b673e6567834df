package hostproc_test

import (
	"bytes"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// kernelMemoryCgroup says, from the kernel's own view and apart from
// hostproc's code, which memory controller root can make job cgroups
// under on this machine: cgroup v2 when /sys/fs/cgroup is the unified
// hierarchy with memory enabled for its children and writable, else
// cgroup v1 when a writable v1 memory hierarchy is mounted at
// /sys/fs/cgroup/memory. mode is "" when neither holds, with why.
func kernelMemoryCgroup() (mode, dir, why string) {
	const root = "/sys/fs/cgroup"
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return "", "", err.Error()
	}
	if st.Type == unix.CGROUP2_SUPER_MAGIC {
		ctl, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
		switch {
		case err != nil:
			return "", "", err.Error()
		case !bytes.Contains(ctl, []byte("memory")):
			return "", "", "cgroup v2 without the memory controller enabled at " + root + " (a container's cgroup namespace?)"
		case unix.Access(root, unix.W_OK) != nil:
			return "", "", root + " is not writable"
		}
		return "v2", root, ""
	}
	mem := filepath.Join(root, "memory")
	if err := unix.Statfs(mem, &st); err != nil || st.Type != unix.CGROUP_SUPER_MAGIC {
		return "", "", "no cgroup v2 at " + root + " and no cgroup v1 memory hierarchy at " + mem
	}
	if unix.Access(mem, unix.W_OK) != nil {
		return "", "", mem + " is not writable"
	}
	return "v1", mem, ""
}
