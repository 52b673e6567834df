package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/runtime"
)

// ErrBadSpec wraps every reason Start refuses a Spec.
var ErrBadSpec = errors.New("invalid job spec")

// cpuPeriod is the CFS period; a job with CPUs=n gets n periods of quota.
const cpuPeriod = 100000

// minShm is the smallest /dev/shm a job gets.
const minShm = 64 << 20

// initScript is PID 1 of every job container, run by the image's /bin/sh
// with the job's argv as "$@":
//
//   - it points its stdout and stderr at the bind-mounted output files
//     (see output.go), which the job inherits;
//   - it runs the job as its child, so the job is not PID 1 of the PID
//     namespace. The kernel drops signals to a namespace's init that has no
//     handler for them, so a job script run as PID 1 would never die of
//     SIGTERM; as a child it gets PBS's semantics (TERM kills it unless it
//     traps TERM). The init itself has no handler, so the SIGTERM Stop sends
//     to every process of the container leaves it waiting, and it exits
//     with the job's status once the job is gone (SIGKILL ends it too).
//
// Images must therefore have a POSIX /bin/sh (any image that runs job
// scripts does).
func initScript(join bool) string {
	redirect := "exec >>" + runtime.OutputStdout + " 2>>" + runtime.OutputStderr
	if join {
		redirect = "exec >>" + runtime.OutputStdout + " 2>&1"
	}
	return redirect + "\n\"$@\" &\nwait $!\n"
}

// host is what spec generation reads from the node, replaceable in tests.
type host struct {
	lookPath func(string) (string, error) // exec.LookPath
	memTotal int64                        // bytes of RAM, for /dev/shm without a memory limit
	nofile   uint64                       // RLIMIT_NOFILE for jobs
	memlock  uint64                       // RLIMIT_MEMLOCK for jobs
	path     string                       // PATH for OCI hooks
}

// validate checks what Start needs of s.
func validate(s runtime.Spec) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: job %s: %s", ErrBadSpec, s.JobID, fmt.Sprintf(format, a...))
	}
	switch {
	case s.JobID == "":
		return bad("empty job id")
	case s.Image == "":
		return bad("no image")
	case len(s.Args) == 0:
		return bad("no command")
	case s.Stdout == "" || s.Stderr == "":
		return bad("stdout and stderr paths are required")
	case !filepath.IsAbs(s.Stdout) || !filepath.IsAbs(s.Stderr):
		return bad("output paths must be absolute")
	case s.WorkDir != "" && !filepath.IsAbs(s.WorkDir):
		return bad("work dir %q is not absolute", s.WorkDir)
	case s.WorkDir != "" && filepath.Clean(s.WorkDir) == "/":
		return bad("work dir / would hide the image")
	case s.CPUs < 0 || s.Memory < 0:
		return bad("negative limit")
	case s.Run < 0:
		return bad("negative run")
	case s.Pids < 0:
		return bad("negative pids limit")
	case !validNetwork(s.Network):
		return bad("network %q (want %q or %q)", s.Network, runtime.NetworkHost, runtime.NetworkNone)
	}
	for _, m := range s.Mounts {
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Dest) {
			return bad("mount %s:%s: paths must be absolute", m.Source, m.Dest)
		}
		if filepath.Clean(m.Dest) == "/" || strings.HasPrefix(filepath.Clean(m.Dest), runtime.OutputDir) {
			return bad("mount destination %s is reserved", m.Dest)
		}
	}
	for _, d := range s.Devices {
		if !filepath.IsAbs(d) {
			return bad("device %q is not absolute", d)
		}
	}
	return nil
}

// specOpts returns the OCI spec options of s, applied after the image's
// config (oci.WithImageConfig) on containerd's default Linux spec.
func specOpts(s runtime.Spec, h host) ([]oci.SpecOpts, error) {
	join := s.Stdout == s.Stderr
	args := append([]string{"/bin/sh", "-c", initScript(join), "sharq-init"}, s.Args...)
	opts := []oci.SpecOpts{
		oci.WithProcessArgs(args...),
		oci.WithEnv(s.Env),
		withoutNvidiaDeviceRequests,
		oci.WithUIDGID(s.UID, s.GID),
		withGroups(s.GID, s.Groups),
		oci.WithNoNewPrivileges,
		withNoPrivileges(s.UID),
		withHostFiles("/etc/hosts", "/etc/resolv.conf"),
		withRlimits(h.nofile, h.memlock),
	}
	if s.WorkDir != "" {
		opts = append(opts, oci.WithProcessCwd(s.WorkDir))
	}
	opts = append(opts, withUmask(s.FileUmask()))

	mounts := []specs.Mount{
		// The job's own cgroup, read-only: programs size themselves by
		// their CPU quota and memory limit.
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
		bind(s.Stdout, runtime.OutputStdout, false),
	}
	if !join {
		mounts = append(mounts, bind(s.Stderr, runtime.OutputStderr, false))
	}
	for _, m := range s.Mounts {
		mounts = append(mounts, bind(m.Source, m.Dest, m.ReadOnly))
	}
	// After s.Mounts: the submit directory stays writable below a
	// read-only site mount (/home:ro).
	if s.WorkDir != "" {
		mounts = append(mounts, bind(s.WorkDir, s.WorkDir, false))
	}
	opts = append(opts, oci.WithMounts(mounts))

	for _, d := range s.Devices {
		dev, err := hostDevice(d)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", s.JobID, err)
		}
		opts = append(opts, withDevice(dev))
	}

	if s.CPUs > 0 {
		opts = append(opts, oci.WithCPUCFS(int64(s.CPUs)*cpuPeriod, cpuPeriod))
	}
	shm := h.memTotal / 2
	if s.Memory > 0 {
		opts = append(opts, oci.WithMemoryLimit(uint64(s.Memory)))
		shm = s.Memory / 2
	}
	opts = append(opts, oci.WithDevShmSize(max(shm, minShm)>>10))

	opts = append(opts, confineOpts(s)...)

	if hook, ok := nvidiaHook(h); ok {
		opts = append(opts, hook)
	}
	return opts, nil
}

// generateSpec builds s's spec without an image (the image config is the
// first option at Start); for tests and inspection.
func generateSpec(ctx context.Context, id string, s runtime.Spec, h host) (*oci.Spec, error) {
	opts, err := specOpts(s, h)
	if err != nil {
		return nil, err
	}
	return oci.GenerateSpec(ctx, nil, &containers.Container{ID: id}, opts...)
}

func bind(src, dst string, ro bool) specs.Mount {
	mode := "rw"
	if ro {
		mode = "ro"
	}
	return specs.Mount{Type: "bind", Source: src, Destination: dst, Options: []string{"rbind", mode, "nosuid"}}
}

// withUmask sets the job's processes' umask (runc applies it before the
// process starts; sessions exec with the same process spec).
func withUmask(umask uint32) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		s.Process.User.Umask = &umask
		return nil
	}
}

// withHostFiles bind-mounts the host's files (those that exist) read-only
// at the same paths: with the host's network, jobs resolve names as the
// host does.
func withHostFiles(paths ...string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		for _, p := range paths {
			if _, err := os.Stat(p); err == nil {
				s.Mounts = append(s.Mounts, specs.Mount{Type: "bind", Source: p, Destination: p, Options: []string{"rbind", "ro"}})
			}
		}
		return nil
	}
}

// withGroups sets the supplementary groups explicitly: gid and groups,
// without looking at the image's /etc/group.
func withGroups(gid uint32, groups []uint32) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		all := []uint32{gid}
		for _, g := range groups {
			if !slices.Contains(all, g) {
				all = append(all, g)
			}
		}
		s.Process.User.AdditionalGids = all
		return nil
	}
}

// withNoPrivileges leaves root jobs containerd's default capabilities and
// gives every other user none at all.
func withNoPrivileges(uid uint32) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if uid == 0 {
			return nil
		}
		s.Process.Capabilities = &specs.LinuxCapabilities{
			Bounding: []string{}, Effective: []string{}, Permitted: []string{}, Inheritable: []string{}, Ambient: []string{},
		}
		return nil
	}
}

// withRlimits gives jobs the node daemon's own hard limits of open files
// and locked memory (RDMA, NCCL need much), instead of containerd's
// default 1024 files. Raising a limit above the daemon's needs
// CAP_SYS_RESOURCE, which runc may not have: set the limits of the node
// daemon (systemd LimitNOFILE=, LimitMEMLOCK=infinity) instead.
func withRlimits(nofile, memlock uint64) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		set := func(typ string, v uint64) {
			for i := range s.Process.Rlimits {
				if s.Process.Rlimits[i].Type == typ {
					s.Process.Rlimits[i].Hard, s.Process.Rlimits[i].Soft = v, v
					return
				}
			}
			s.Process.Rlimits = append(s.Process.Rlimits, specs.POSIXRlimit{Type: typ, Hard: v, Soft: v})
		}
		if nofile > 0 {
			set("RLIMIT_NOFILE", nofile)
		}
		if memlock > 0 {
			set("RLIMIT_MEMLOCK", memlock)
		}
		return nil
	}
}

// hostDevice describes the device node at path (symlinks followed), to be
// created at the same path in the container.
func hostDevice(path string) (specs.LinuxDevice, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return specs.LinuxDevice{}, fmt.Errorf("device %s: %w", path, err)
	}
	var typ string
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		typ = "c"
	case unix.S_IFBLK:
		typ = "b"
	default:
		return specs.LinuxDevice{}, fmt.Errorf("device %s: %w", path, oci.ErrNotADevice)
	}
	mode := os.FileMode(st.Mode &^ unix.S_IFMT)
	uid, gid := st.Uid, st.Gid
	return specs.LinuxDevice{
		Path: path, Type: typ,
		Major: int64(unix.Major(st.Rdev)), Minor: int64(unix.Minor(st.Rdev)),
		FileMode: &mode, UID: &uid, GID: &gid,
	}, nil
}

// withDevice adds dev and a device cgroup rule allowing it; the default
// spec's deny-all rule stays first.
func withDevice(dev specs.LinuxDevice) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux == nil {
			s.Linux = &specs.Linux{}
		}
		if s.Linux.Resources == nil {
			s.Linux.Resources = &specs.LinuxResources{}
		}
		s.Linux.Devices = append(s.Linux.Devices, dev)
		major, minor := dev.Major, dev.Minor
		s.Linux.Resources.Devices = append(s.Linux.Resources.Devices, specs.LinuxDeviceCgroup{
			Allow: true, Type: dev.Type, Major: &major, Minor: &minor, Access: "rwm",
		})
		return nil
	}
}
