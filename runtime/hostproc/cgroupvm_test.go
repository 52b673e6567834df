//go:build !unit

package hostproc_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testKernelEnv names the kernel TestConformanceOtherCgroupMode boots;
// testKernel is where contrib/local/install-deps.sh --test puts Debian's.
const (
	testKernelEnv = "SHARQ_TEST_KERNEL"
	testKernel    = "/usr/local/lib/sharq/test-vmlinuz"
)

// TestConformanceOtherCgroupMode runs TestConformance as root in a
// virtual machine (qemu, emulated: no KVM needed) whose memory controller
// is in the cgroup mode this machine's is not: cgroup v2 when the host's
// memory cgroups are v1 or unusable, v1 when they are v2. So both of
// hostproc's paths (v2's memory.max and clone3 into the cgroup, v1's gate
// and memory.limit_in_bytes) run for real wherever the tests run, with
// TestConformance's OOM and memory limit cases. The guest is Debian's
// kernel with an initramfs of this package's test binary and the host's
// static busybox.
func TestConformanceOtherCgroupMode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package's tests and boots a virtual machine")
	}
	if os.Geteuid() != 0 {
		t.Skip("TestConformance's memory cases run as root")
	}
	qemu, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Fatalf("%v (Debian's qemu-system-x86: contrib/local/install-deps.sh --test)", err)
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatalf("%v (Debian's busybox-static: contrib/local/install-deps.sh)", err)
	}
	kernel := os.Getenv(testKernelEnv)
	if kernel == "" {
		kernel = testKernel
	}
	if _, err := os.Stat(kernel); err != nil {
		t.Fatalf("the guest's kernel: %v (contrib/local/install-deps.sh --test fetches Debian's; or set %s)", err, testKernelEnv)
	}
	host, _, _ := kernelMemoryCgroup()
	guest := "v2"
	if host == "v2" {
		guest = "v1"
	}
	t.Logf("host memory cgroups %q, guest's %s", host, guest)

	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{"bin", "proc", "sys", "dev", "tmp", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The package's tests, static (no race detector: it needs the host's
	// libc), as the guest's program.
	build := exec.Command("go", "test", "-c", "-o", filepath.Join(root, "hostproc.test"), "github.com/sharq-hpc/sharq/runtime/hostproc")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	mountCgroups := map[string]string{
		"v2": `mount -t cgroup2 cgroup2 /sys/fs/cgroup
echo +memory > /sys/fs/cgroup/cgroup.subtree_control`,
		"v1": `mount -t tmpfs cgroup /sys/fs/cgroup
mkdir /sys/fs/cgroup/memory
mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory`,
	}[guest]
	files := map[string]string{
		"bin/busybox": string(bb),
		"etc/passwd":  "root:x:0:0:root:/tmp:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n",
		"etc/group":   "root:x:0:\nuser:x:1000:\n",
		"init": `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
chmod 1777 /tmp
` + mountCgroups + `
cd /tmp
/hostproc.test -test.run='^TestConformance$' -test.v -test.count=1 -test.timeout=10m
echo "sharq-guest-exit $?"
poweroff -f
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	initrd := filepath.Join(dir, "initrd.cpio")
	list := exec.Command("find", ".")
	list.Dir = root
	names, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	cpio := exec.Command(busybox, "cpio", "-o", "-H", "newc")
	cpio.Dir, cpio.Stdin = root, bytes.NewReader(names)
	archive, err := cpio.Output()
	if err != nil {
		t.Fatalf("cpio: %v", err)
	}
	if err := os.WriteFile(initrd, archive, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	vm := exec.CommandContext(ctx, qemu, "-accel", "tcg", "-m", "512", "-smp", "1",
		"-kernel", kernel, "-initrd", initrd, "-append", "console=ttyS0 panic=-1 quiet",
		"-nographic", "-no-reboot", "-nic", "none")
	out, err := vm.CombinedOutput()
	console := string(out)
	if err != nil {
		t.Fatalf("qemu: %v\nconsole:\n%s", err, console)
	}
	for _, want := range []string{
		fmt.Sprintf("memory cgroups: %s at ", guest), // TestConformance's check of the mode taken
		"--- PASS: TestConformance/root/OOMKilled",
		"--- PASS: TestConformance/user/OOMKilled",
		"--- PASS: TestConformance ",
		"sharq-guest-exit 0",
	} {
		if !strings.Contains(console, want) {
			t.Fatalf("the guest's console has no %q:\n%s", want, console)
		}
	}
}
