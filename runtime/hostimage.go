package runtime

// HostImage is the image name that runs a job on the node's own root
// filesystem instead of an image's: the job sees the node's installed
// software (compilers, Python, the site's modules) as a login shell does,
// read-only, with the same isolation as any other job (its own PID, mount
// and IPC namespaces, uid and gids, no capabilities, no new privileges,
// only its GPUs' device nodes, the cgroup limits). Its /tmp and /var/tmp
// are private to the job; /run, /dev, /dev/shm and /sys are the
// container's own, as in any image.
const HostImage = "host"

// DefaultHostRootDir is the empty directory a host-rootfs container's root
// is made on: containerd needs a root path, and the host's / is then bound
// over it (inside the container's mount namespace only).
const DefaultHostRootDir = "/var/lib/sharq/hostroot"
