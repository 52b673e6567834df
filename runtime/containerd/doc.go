// Package containerd runs one node's jobs as containers: the
// runtime.Runtime implementation on the containerd/v2 client (namespace
// "sharq", runc), local OCI image building (BuildImage, from a static
// busybox) and import (ImportImage).
//
// A job container runs the job as the child of a small /bin/sh init (see
// initScript) that points stdout/stderr at the bind-mounted output files,
// so output does not depend on the node daemon being alive; it has the
// host's network (or, with Spec.Network "none", an empty one of its own),
// its own PID/IPC/mount namespaces, the job's UID, GID and groups, no
// capabilities unless root, no new privileges, containerd's default
// seccomp profile (no new namespaces unless Spec.UserNS), a pids limit,
// and only the device nodes in Spec.Devices beyond the default ones
// (device cgroup). See confine.go.
package containerd
