// Package hostproc is a runtime.Runtime that runs each job as a plain host
// process: no container, no image (Spec.Image is not used; the job sees
// the host's file system), no mounts, devices, network or namespace
// confinement. It exists so that the node daemon's and controller's tests
// can run real job processes without containerd, and it passes the same
// conformance suite (runtime/runtimetest) as the containerd runtime. It is
// not a production runtime: nothing keeps a job from the rest of the host.
//
// What it does keep from runtime.Runtime: a job runs as Spec.UID:GID
// (root is needed for any other user; as another user Start refuses), in
// Spec.WorkDir, with exactly Spec.Env, writing its own stdout and stderr
// files, opened by the same rules as the containerd runtime
// (runtime.OpenJobFiles); Stop signals the job's whole process group (and
// its cgroup); exit statuses are PBS's (the code, or 256+signal).
//
// Memory limits are the kernel's: each job with Spec.Memory gets a memory
// cgroup of its own (cgroup v2 memory.max with swap off, entered with
// clone3's CLONE_INTO_CGROUP; or cgroup v1 memory.limit_in_bytes and
// memsw, entered before the job's program runs), and OOMKilled reads the
// cgroup's oom_kill count, as the containerd runtime reads its container's.
// Where no writable memory cgroup exists (not root, or a read-only cgroup
// file system) MemoryLimits is false and Start of a Spec with Memory fails
// with runtime.ErrUnsupported: a limit is never silently dropped. CPU and
// process-count limits (Spec.CPUs, Spec.Pids) are not applied.
//
// Jobs are known to the Runtime value that started them: List does not
// find a previous process's jobs (a restarted node daemon re-adopts
// nothing), and Close kills the jobs still running.
package hostproc
