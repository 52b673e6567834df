//go:build !unit

package containerd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/internal/testenv"
	"github.com/sharq-hpc/sharq/runtime"
)

// TestHostImage runs jobs on the host's root filesystem: they see the
// host's files read-only at every level, their own /tmp, their bind
// mounts writable, and keep the same identity and lack of privileges.
func TestHostImage(t *testing.T) {
	rt := newRuntime(t, "hostroot")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	// A file only the host has, in a directory a host-rootfs job does not
	// get privately (the test's /tmp is replaced by the job's own).
	mark, err := os.CreateTemp("/var/lib", "sharq-hostroot-")
	if err != nil {
		t.Fatal(err)
	}
	mark.WriteString("from the host\n")
	mark.Chmod(0o644)
	mark.Close()
	t.Cleanup(func() { os.Remove(mark.Name()) })
	hostTmp, err := os.CreateTemp("", "sharq-hosttmp-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	t.Cleanup(func() { os.Remove(hostTmp.Name()) })

	// A separate host mount below / (as /var or /home often are), writable
	// by everyone on the host: read-only in the job all the same.
	sub, err := os.MkdirTemp("/var/lib", "sharq-hostsub-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(sub) })
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "mode=1777"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(sub, unix.MNT_DETACH) })
	open, err := os.MkdirTemp("/var/lib", "sharq-hostopen-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	os.Chmod(open, 0o1777)
	// GPUs: fake device nodes; the job gets nvidia1 only.
	gpuDir, err := os.MkdirTemp("/var/lib", "sharq-hostgpus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(gpuDir) })
	os.Chmod(gpuDir, 0o755)
	gpus, err := testenv.MakeFakeGPUs(gpuDir, 3)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		script string
		want   []string // lines the output must contain
		code   int
		edit   func(*runtime.Spec)
	}{
		{"host files", "cat " + mark.Name() + "; id -u; id -G", []string{"from the host", "1000"}, 0, nil},
		{"root read-only", "touch /etc/sharq-x 2>/dev/null && echo wrote || echo ro; touch /sharq-x 2>/dev/null && echo wrote || echo ro", []string{"ro\nro"}, 0, nil},
		{"private tmp", "test -e " + hostTmp.Name() + " && echo shared || echo private; echo hi > /tmp/x && cat /tmp/x; stat -c %a /tmp", []string{"private", "hi", "1777"}, 0, nil},
		{"workdir writable", "echo out > " + filepath.Join(dir, "w") + " && cat " + filepath.Join(dir, "w"), []string{"out"}, 0, nil},
		{"no privileges", "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status", []string{"0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"}, 0, nil},
		{"exit status", "exit 3", nil, 3, nil},
		{"submount read-only", "touch " + sub + "/x 2>/dev/null && echo wrote || echo ro", []string{"ro"}, 0, nil},
		{"gpus and limits", "cat " + gpus[1] + " 2>&1; cat " + gpus[2] + " 2>&1; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max",
			[]string{gpus[1] + ": No such device or address", gpus[2] + ": Operation not permitted", "268435456"}, 0,
			func(s *runtime.Spec) { s.Devices, s.Memory = []string{gpus[1]}, 256<<20 }},
		// Mounts at their host paths (which the job's root has): the
		// writable one over the frozen submount stays writable.
		{"configured mounts", "echo m > " + sub + "/f && cat " + sub + "/f; touch " + open + "/f 2>/dev/null && echo wrote || echo ro", []string{"m\nro"}, 0,
			func(s *runtime.Spec) {
				s.Mounts = []runtime.Mount{{Source: sub, Dest: sub}, {Source: open, Dest: open, ReadOnly: true}}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := userSpec("hostroot", dir, strings.ReplaceAll(tc.name, " ", "-"), tc.script)
			s.Image = runtime.HostImage
			if tc.edit != nil {
				tc.edit(&s)
			}
			code, out := runJob(t, rt, s)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; output:\n%s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
