package containerd

import (
	"context"
	"fmt"
	goruntime "runtime"
	"slices"

	"github.com/containerd/containerd/v2/contrib/seccomp"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sharq-hpc/sharq/runtime"
)

// Confinement of a job beyond its user's rights (see SECURITY.md):
//
//   - a pids limit (Spec.Pids): a fork bomb fills its own cgroup, not the
//     node's process table;
//   - containerd's default seccomp profile (contrib/seccomp, the same as
//     Docker's): no kernel keyrings, no bpf, no perf_event_open, no mount
//     and, since jobs never hold CAP_SYS_ADMIN, no clone/unshare/setns of
//     new namespaces — so no new user namespace, in which an unprivileged
//     process would hold every capability. A partition that runs rootless
//     container tools (apptainer, podman) sets allow_user_namespaces, and
//     its jobs get the namespace system calls back (withUserNamespaces);
//   - the profile for the node's own system call ABI only
//     (withNativeABIOnly): no 32-bit (int 0x80) or x32 system calls;
//   - the network (Spec.Network): the host's (the default) or a new,
//     empty network namespace with only a loopback interface.

// nsSyscalls are the system calls of namespaces and of mounting in them,
// which the default profile gives only to CAP_SYS_ADMIN holders.
var nsSyscalls = []string{
	"clone", "clone3", "unshare", "setns",
	"mount", "umount", "umount2", "mount_setattr", "move_mount", "open_tree",
	"fsopen", "fsconfig", "fsmount", "fspick",
	"sethostname", "setdomainname",
}

// confineOpts are the options of s's confinement; they come after the
// capabilities are set (the seccomp profile depends on them).
func confineOpts(s runtime.Spec) []oci.SpecOpts {
	opts := []oci.SpecOpts{seccomp.WithDefaultProfile(), withNativeABIOnly}
	if s.UserNS {
		opts = append(opts, withUserNamespaces)
	}
	if s.Memory > 0 {
		opts = append(opts, withNoSwap)
	}
	if s.Pids > 0 {
		opts = append(opts, oci.WithPidsLimit(s.Pids))
	}
	if s.Network == runtime.NetworkNone {
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace}))
	} else {
		opts = append(opts, oci.WithHostNamespace(specs.NetworkNamespace))
	}
	return opts
}

// nativeArch is the seccomp architecture of the node's own system call ABI,
// for the GOARCHes whose default profile also lists compatibility ABIs.
var nativeArch = map[string]specs.Arch{"amd64": specs.ArchX86_64, "arm64": specs.ArchAARCH64}[goruntime.GOARCH]

// withNativeABIOnly keeps the default profile to the node's own ABI: the
// profile lists the compatibility ABIs too (x86 and x32 beside x86_64,
// ARM beside AArch64), and a system call through one of them (a 32-bit
// binary, or int 0x80 from a 64-bit one) then fails the filter's
// architecture check, which kills the calling thread. The compatibility
// entry points are kernel code that GPU jobs never need (CUDA has no
// 32-bit x86 build) and that has had its own privilege-escalation bugs.
// It also makes each job start cheaper: runc compiles the filter once per
// listed architecture, which was about a tenth of a job start's CPU
// (BenchmarkJobDrain: 70-75 ms a job with three, 63-68 ms with one).
func withNativeABIOnly(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	if s.Linux == nil || s.Linux.Seccomp == nil {
		return fmt.Errorf("native ABI: no seccomp profile to amend")
	}
	if nativeArch != "" {
		s.Linux.Seccomp.Architectures = []specs.Arch{nativeArch}
	}
	return nil
}

// withUserNamespaces lets the job create namespaces (rootless containers):
// the default profile's rules that refuse clone with namespace flags and
// clone3 (ENOSYS, so that glibc falls back to clone) give way to an allow
// rule. The job holds no capability in the node's own namespaces still.
func withUserNamespaces(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	if s.Linux == nil || s.Linux.Seccomp == nil {
		return fmt.Errorf("user namespaces: no seccomp profile to amend")
	}
	sc := s.Linux.Seccomp
	sc.Syscalls = slices.DeleteFunc(sc.Syscalls, func(r specs.LinuxSyscall) bool {
		return slices.ContainsFunc(r.Names, func(n string) bool { return n == "clone" || n == "clone3" }) &&
			(len(r.Args) > 0 || r.Action != specs.ActAllow)
	})
	sc.Syscalls = append(sc.Syscalls, specs.LinuxSyscall{Names: slices.Clone(nsSyscalls), Action: specs.ActAllow})
	return nil
}

// withNoSwap makes the memory limit hard: memory and swap together may not
// exceed it, so a job over its limit is OOM-killed (and reported so)
// instead of swapping the node.
func withNoSwap(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
	if s.Linux == nil || s.Linux.Resources == nil || s.Linux.Resources.Memory == nil || s.Linux.Resources.Memory.Limit == nil {
		return nil
	}
	m := s.Linux.Resources.Memory
	swap := *m.Limit
	m.Swap = &swap
	return nil
}

// validNetwork tells whether n is a Spec.Network.
func validNetwork(n string) bool {
	return n == "" || n == runtime.NetworkHost || n == runtime.NetworkNone
}
