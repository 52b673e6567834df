package containerd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sharq-hpc/sharq/runtime"
)

func baseSpec() runtime.Spec {
	return runtime.Spec{
		JobID: "12.lab", Node: "n1", Image: "img", UID: 1000, GID: 100, Groups: []uint32{100, 2000},
		Args: []string{"/bin/sh", "job.sh"}, Env: []string{"A=1"}, WorkDir: "/home/u",
		Stdout: "/home/u/o", Stderr: "/home/u/e",
	}
}

func testHost(tools ...string) host {
	return host{
		lookPath: func(name string) (string, error) {
			if slices.Contains(tools, name) {
				return "/usr/bin/" + name, nil
			}
			return "", exec.ErrNotFound
		},
		memTotal: 8 << 30, nofile: 65536, memlock: 1 << 20, path: "/usr/bin:/bin",
	}
}

func gen(t *testing.T, s runtime.Spec, h host) *oci.Spec {
	t.Helper()
	ctx := namespaces.WithNamespace(context.Background(), "test")
	spec, err := generateSpec(ctx, runtime.ContainerID(s.Node, s.JobID), s, h)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func findMount(spec *oci.Spec, dest string) (specs.Mount, bool) {
	for _, m := range spec.Mounts {
		if m.Destination == dest {
			return m, true
		}
	}
	return specs.Mount{}, false
}

func TestSpecProcess(t *testing.T) {
	spec := gen(t, baseSpec(), testHost())
	p := spec.Process
	wantArgs := []string{"/bin/sh", "-c", initScript(false), "sharq-init", "/bin/sh", "job.sh"}
	if !slices.Equal(p.Args, wantArgs) {
		t.Errorf("args = %q, want %q", p.Args, wantArgs)
	}
	if !slices.Contains(p.Env, "A=1") {
		t.Errorf("env %q lacks A=1", p.Env)
	}
	if p.Cwd != "/home/u" {
		t.Errorf("cwd = %q", p.Cwd)
	}
	if p.User.UID != 1000 || p.User.GID != 100 || !slices.Equal(p.User.AdditionalGids, []uint32{100, 2000}) {
		t.Errorf("user = %+v, want 1000:100 groups [100 2000]", p.User)
	}
	if !p.NoNewPrivileges {
		t.Error("no_new_privileges not set")
	}
	c := p.Capabilities
	if len(c.Bounding)+len(c.Effective)+len(c.Permitted)+len(c.Inheritable)+len(c.Ambient) != 0 {
		t.Errorf("non-root job has capabilities %+v", c)
	}
	rl := map[string]uint64{}
	for _, r := range p.Rlimits {
		rl[r.Type] = r.Hard
	}
	if rl["RLIMIT_NOFILE"] != 65536 || rl["RLIMIT_MEMLOCK"] != 1<<20 {
		t.Errorf("rlimits = %v", rl)
	}
}

func TestSpecRootKeepsDefaultCapabilities(t *testing.T) {
	s := baseSpec()
	s.UID, s.GID = 0, 0
	spec := gen(t, s, testHost())
	eff := spec.Process.Capabilities.Effective
	if !slices.Contains(eff, "CAP_CHOWN") || slices.Contains(eff, "CAP_SYS_ADMIN") {
		t.Errorf("root job capabilities %q: want containerd's defaults", eff)
	}
}

func TestSpecNamespacesAndMounts(t *testing.T) {
	s := baseSpec()
	s.Mounts = []runtime.Mount{{Source: "/scratch", Dest: "/ckpt"}, {Source: "/etc/nodes", Dest: "/nodefile", ReadOnly: true}}
	spec := gen(t, s, testHost())
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type == specs.NetworkNamespace {
			t.Error("job has its own network namespace, want the host's")
		}
	}
	if !slices.ContainsFunc(spec.Linux.Namespaces, func(ns specs.LinuxNamespace) bool { return ns.Type == specs.PIDNamespace }) {
		t.Error("job shares the host's PID namespace")
	}
	for _, tc := range []struct {
		dest, src, mode string
	}{
		{runtime.OutputStdout, "/home/u/o", "rw"},
		{runtime.OutputStderr, "/home/u/e", "rw"},
		{"/home/u", "/home/u", "rw"},
		{"/ckpt", "/scratch", "rw"},
		{"/nodefile", "/etc/nodes", "ro"},
	} {
		m, ok := findMount(spec, tc.dest)
		if !ok || m.Source != tc.src || m.Type != "bind" || !slices.Contains(m.Options, tc.mode) || !slices.Contains(m.Options, "nosuid") {
			t.Errorf("mount %s: %+v (found %v), want bind of %s %s,nosuid", tc.dest, m, ok, tc.src, tc.mode)
		}
	}
	if _, ok := findMount(spec, "/etc/hosts"); !ok {
		t.Error("no /etc/hosts from the host")
	}
	if m, ok := findMount(spec, "/sys/fs/cgroup"); !ok || !slices.Contains(m.Options, "ro") {
		t.Errorf("cgroup mount %+v (found %v), want read-only", m, ok)
	}
}

func TestSpecJoinedOutput(t *testing.T) {
	s := baseSpec()
	s.Stderr = s.Stdout
	spec := gen(t, s, testHost())
	if _, ok := findMount(spec, runtime.OutputStderr); ok {
		t.Error("joined output mounts a stderr file")
	}
	if !strings.Contains(spec.Process.Args[2], "2>&1") {
		t.Errorf("init script %q does not join stderr", spec.Process.Args[2])
	}
}

func TestSpecResources(t *testing.T) {
	tests := []struct {
		name     string
		cpus     int
		memory   int64
		quota    int64 // 0: none
		shmBytes int64
	}{
		{"no limits", 0, 0, 0, 4 << 30},
		{"cpus", 4, 0, 400000, 4 << 30},
		{"memory", 0, 1 << 30, 0, 512 << 20},
		{"tiny memory keeps 64 MiB shm", 1, 16 << 20, 100000, 64 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			s.CPUs, s.Memory = tc.cpus, tc.memory
			spec := gen(t, s, testHost())
			r := spec.Linux.Resources
			switch {
			case tc.quota == 0 && r.CPU != nil && r.CPU.Quota != nil:
				t.Errorf("CPU quota %d, want none", *r.CPU.Quota)
			case tc.quota != 0 && (r.CPU == nil || r.CPU.Quota == nil || *r.CPU.Quota != tc.quota || *r.CPU.Period != cpuPeriod):
				t.Errorf("CPU %+v, want quota %d period %d", r.CPU, tc.quota, cpuPeriod)
			}
			switch {
			case tc.memory == 0 && r.Memory != nil && r.Memory.Limit != nil:
				t.Errorf("memory limit %d, want none", *r.Memory.Limit)
			case tc.memory != 0 && (r.Memory == nil || r.Memory.Limit == nil || *r.Memory.Limit != tc.memory):
				t.Errorf("memory %+v, want limit %d", r.Memory, tc.memory)
			}
			m, _ := findMount(spec, "/dev/shm")
			if want := "size=" + strconv.FormatInt(tc.shmBytes>>10, 10) + "k"; !slices.Contains(m.Options, want) {
				t.Errorf("/dev/shm options %q, want %s", m.Options, want)
			}
		})
	}
}

func TestSpecDevices(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	s := baseSpec()
	s.Devices = []string{"/dev/zero", link}
	spec := gen(t, s, testHost())
	var got []specs.LinuxDevice
	for _, d := range spec.Linux.Devices {
		if d.Path == "/dev/zero" || d.Path == link {
			got = append(got, d)
		}
	}
	if len(got) != 2 || got[0].Major != 1 || got[0].Minor != 5 || got[1].Path != link || got[1].Minor != 3 || got[1].Type != "c" {
		t.Errorf("devices = %+v, want /dev/zero 1:5 and %s 1:3 (symlink followed, path kept)", got, link)
	}
	rules := spec.Linux.Resources.Devices
	if len(rules) == 0 || rules[0].Allow || rules[0].Access != "rwm" || rules[0].Major != nil {
		t.Fatalf("first device rule %+v, want deny all", rules)
	}
	for _, want := range [][2]int64{{1, 5}, {1, 3}} {
		if !slices.ContainsFunc(rules, func(r specs.LinuxDeviceCgroup) bool {
			return r.Allow && r.Type == "c" && r.Major != nil && *r.Major == want[0] && *r.Minor == want[1] && r.Access == "rwm"
		}) {
			t.Errorf("no allow rule for c %d:%d in %+v", want[0], want[1], rules)
		}
	}

	for _, bad := range []string{filepath.Join(dir, "missing"), dir} {
		s.Devices = []string{bad}
		if _, err := generateSpec(namespaces.WithNamespace(context.Background(), "t"), "x", s, testHost()); err == nil {
			t.Errorf("device %s accepted", bad)
		}
	}
	if _, err := specOpts(runtime.Spec{JobID: "1", Devices: []string{dir}}, testHost()); !errors.Is(err, oci.ErrNotADevice) {
		t.Errorf("directory as device: %v, want ErrNotADevice", err)
	}
}

func TestSpecNvidiaHook(t *testing.T) {
	tests := []struct {
		name    string
		tools   []string
		env     []string
		hook    bool
		wantEnv string
	}{
		{"no toolkit", nil, nil, false, ""},
		{"hook without cli", []string{nvidiaHookBin}, nil, false, ""},
		{"cli without hook", []string{nvidiaCLI}, nil, false, ""},
		{"toolkit", []string{nvidiaCLI, nvidiaHookBin}, nil, true, "NVIDIA_VISIBLE_DEVICES=none"},
		{"toolkit, job chose devices", []string{nvidiaCLI, nvidiaHookBin}, []string{"NVIDIA_VISIBLE_DEVICES=GPU-1"}, true, "NVIDIA_VISIBLE_DEVICES=GPU-1"},
		// A job asks the toolkit for more than its GPUs: it gets none of it.
		{"toolkit, job asks for MIG monitoring, IMEX and more", []string{nvidiaCLI, nvidiaHookBin}, []string{
			"NVIDIA_MIG_MONITOR_DEVICES=all", "NVIDIA_MIG_CONFIG_DEVICES=all", "NVIDIA_IMEX_CHANNELS=all", "NVIDIA_NVSWITCH=enabled",
			"NVIDIA_GDS=enabled", "NVIDIA_MOFED=enabled", "NVIDIA_GDRCOPY=enabled", "NVIDIA_ALLOW_ADDITIONAL_GIDS=enabled",
		}, true, "NVIDIA_VISIBLE_DEVICES=none"},
		{"no toolkit, job asks for MIG monitoring", nil, []string{"NVIDIA_MIG_MONITOR_DEVICES=all"}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			s.Env = append(s.Env, tc.env...)
			spec := gen(t, s, testHost(tc.tools...))
			var hooks []specs.Hook
			if spec.Hooks != nil {
				//lint:ignore SA1019 the toolkit's hook is a prestart hook
				hooks = spec.Hooks.Prestart
			}
			if !tc.hook {
				if len(hooks) != 0 {
					t.Errorf("hooks %+v, want none", hooks)
				}
				if slices.ContainsFunc(spec.Process.Env, func(e string) bool { return strings.HasPrefix(e, "NVIDIA_") }) {
					t.Errorf("env %q has NVIDIA_ variables", spec.Process.Env)
				}
				return
			}
			want := specs.Hook{Path: "/usr/bin/" + nvidiaHookBin, Args: []string{nvidiaHookBin, "prestart"}, Env: []string{"PATH=/usr/bin:/bin"}}
			if len(hooks) != 1 || hooks[0].Path != want.Path || !slices.Equal(hooks[0].Args, want.Args) || !slices.Equal(hooks[0].Env, want.Env) {
				t.Errorf("hooks %+v, want [%+v]", hooks, want)
			}
			for _, e := range spec.Process.Env {
				if name, _, _ := strings.Cut(e, "="); slices.Contains(nvidiaDeviceRequests, name) {
					t.Errorf("env has %s: a request to the toolkit for more than the job's GPUs", e)
				}
			}
			n := 0
			for _, e := range spec.Process.Env {
				if strings.HasPrefix(e, "NVIDIA_VISIBLE_DEVICES=") {
					n++
					if e != tc.wantEnv {
						t.Errorf("env has %s, want %s", e, tc.wantEnv)
					}
				}
			}
			if n != 1 {
				t.Errorf("env %q: %d NVIDIA_VISIBLE_DEVICES, want 1", spec.Process.Env, n)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*runtime.Spec)
	}{
		{"empty job id", func(s *runtime.Spec) { s.JobID = "" }},
		{"no image", func(s *runtime.Spec) { s.Image = "" }},
		{"no command", func(s *runtime.Spec) { s.Args = nil }},
		{"no stdout", func(s *runtime.Spec) { s.Stdout = "" }},
		{"relative stderr", func(s *runtime.Spec) { s.Stderr = "e" }},
		{"relative work dir", func(s *runtime.Spec) { s.WorkDir = "home" }},
		{"work dir /", func(s *runtime.Spec) { s.WorkDir = "/" }},
		{"negative cpus", func(s *runtime.Spec) { s.CPUs = -1 }},
		{"negative memory", func(s *runtime.Spec) { s.Memory = -1 }},
		{"negative run", func(s *runtime.Spec) { s.Run = -1 }},
		{"relative mount", func(s *runtime.Spec) { s.Mounts = []runtime.Mount{{Source: "x", Dest: "/x"}} }},
		{"mount over /", func(s *runtime.Spec) { s.Mounts = []runtime.Mount{{Source: "/x", Dest: "/"}} }},
		{"mount over output", func(s *runtime.Spec) { s.Mounts = []runtime.Mount{{Source: "/x", Dest: runtime.OutputDir}} }},
		{"relative device", func(s *runtime.Spec) { s.Devices = []string{"nvidia0"} }},
	}
	if err := validate(baseSpec()); err != nil {
		t.Fatalf("base spec: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec()
			tc.change(&s)
			if err := validate(s); !errors.Is(err, ErrBadSpec) {
				t.Errorf("validate: %v, want ErrBadSpec", err)
			}
		})
	}
}

// TestSpecSeccompNativeABIOnly: the seccomp profile of every job lists the
// node's own system call ABI only (withNativeABIOnly), on any kernel: a
// compatibility ABI in the list is a way around the filter's rules.
func TestSpecSeccompNativeABIOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    runtime.Spec
	}{
		{"plain", baseSpec()},
		{"user namespaces", func() runtime.Spec { s := baseSpec(); s.UserNS = true; return s }()},
		{"no network", func() runtime.Spec { s := baseSpec(); s.Network = runtime.NetworkNone; return s }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := gen(t, tc.s, testHost())
			if spec.Linux == nil || spec.Linux.Seccomp == nil {
				t.Fatal("no seccomp profile")
			}
			got := spec.Linux.Seccomp.Architectures
			if nativeArch == "" {
				t.Logf("GOARCH has no compatibility ABI in the default profile: %v", got)
				return
			}
			if !slices.Equal(got, []specs.Arch{nativeArch}) {
				t.Errorf("seccomp architectures %v, want only %s", got, nativeArch)
			}
		})
	}
}
