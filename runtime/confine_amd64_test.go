package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sharq-hpc/sharq/runtime"
)

// compatProbe prints the pid from the 64-bit getpid, then makes the 32-bit
// getpid system call (number 20) through int 0x80, the compatibility ABI,
// and prints what it returned.
const compatProbe = `#include <stdio.h>
#include <unistd.h>
int main(void) {
	long r;
	printf("native=%ld\n", (long)getpid());
	fflush(stdout);
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	printf("compat=%ld\n", r);
	return 0;
}
`

// hostCompatABI runs the probe on the host: true when the kernel serves
// int 0x80 (IA32 emulation built in and enabled), false when it has no
// compatibility ABI (probeCompat). A broken probe fails the test.
func hostCompatABI(t *testing.T, bin string) bool {
	t.Helper()
	out, err := exec.Command(bin).Output()
	compat, err := probeCompat(out, err)
	if err != nil {
		t.Fatal(err)
	}
	return compat
}

// probeCompat reads a host run of the probe: it made the 32-bit call
// (true), or it died on it by SIGSEGV or SIGILL after its native call
// (false: a kernel built without CONFIG_IA32_EMULATION, or booted with
// ia32_emulation=0). Anything else is an error: the probe proves nothing.
func probeCompat(out []byte, runErr error) (bool, error) {
	if runErr == nil {
		if !strings.Contains(string(out), "compat=") || strings.Contains(string(out), "compat=-") {
			return false, fmt.Errorf("the probe's int 0x80 getpid returned an error on the host: %q", out)
		}
		return true, nil
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) && strings.Contains(string(out), "native=") {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
			(ws.Signal() == syscall.SIGSEGV || ws.Signal() == syscall.SIGILL) {
			return false, nil
		}
	}
	return false, fmt.Errorf("the probe failed on the host (%v, %q): it proves nothing", runErr, out)
}

// TestProbeCompat: the reading of the host probe, with shell stand-ins
// for each kernel's answer (the real probe only ever shows one of them).
func TestProbeCompat(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		compat, err  bool
	}{
		{"compat ABI", "echo native=5; echo compat=5", true, false},
		{"compat call failed", "echo native=5; echo compat=-38", false, true},
		{"no compat ABI: SIGSEGV", "echo native=5; kill -SEGV $$", false, false},
		{"no compat ABI: SIGILL", "echo native=5; kill -ILL $$", false, false},
		{"died before its native call", "kill -SEGV $$", false, true},
		{"other signal", "echo native=5; kill -TERM $$", false, true},
		{"exit status", "echo native=5; exit 3", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command("/bin/sh", "-c", tc.script).Output()
			compat, err := probeCompat(out, err)
			if compat != tc.compat || (err != nil) != tc.err {
				t.Errorf("probeCompat = %v, %v; want %v, error %v", compat, err, tc.compat, tc.err)
			}
		})
	}
}

// TestCompatABIRefused: a job's seccomp profile lists the node's own
// system call ABI only, so a system call through the 32-bit ABI fails the
// filter (the thread is killed: SIGSYS) where the same binary on the host
// makes it. The spec containerd holds for the job is checked on every
// kernel; the live probe proves the refusal where the kernel has the
// compatibility ABI at all (a kernel without it has nothing to refuse:
// int 0x80 faults before any filter runs, in the job as on the host).
func TestCompatABIRefused(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, "compat")
	closeRuntime(t, rt)
	dir := jobDir(t, 1000, 1000)
	src, bin := filepath.Join(dir, "probe.c"), filepath.Join(dir, "probe")
	if err := os.WriteFile(src, []byte(compatProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-static", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v: %s", err, out)
	}
	compat := hostCompatABI(t, bin)
	if !compat {
		t.Logf("this kernel (%s) has no 32-bit compatibility ABI: int 0x80 faults on the host; "+
			"checking the job's seccomp architectures, not the live refusal", kernelRelease())
	}

	s := userSpec("compat", dir, "compat", `./probe; echo status=$?`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := rt.Start(ctx, s); err != nil {
		t.Fatalf("start %s: %v", s.JobID, err)
	}
	arches := seccompArches(ctx, t, runtime.ContainerID(s.Node, s.JobID))
	code, err := rt.Wait(ctx, s.JobID)
	if err != nil {
		t.Fatalf("wait %s: %v", s.JobID, err)
	}
	if err := rt.Remove(ctx, s.JobID); err != nil {
		t.Fatalf("remove %s: %v", s.JobID, err)
	}
	if want := []specs.Arch{specs.ArchX86_64}; !slices.Equal(arches, want) {
		t.Errorf("the job's seccomp profile lists architectures %v, want only the node's own %v", arches, want)
	}
	b, err := os.ReadFile(s.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if code != 0 || field(out, "native") == "" {
		t.Fatalf("status %d, output %q", code, out)
	}
	if field(out, "compat") != "" {
		t.Errorf("a 32-bit system call from a job returned: %q", out)
	}
	want := "159" // SIGSYS: the filter's architecture check
	if !compat {
		want = "139" // SIGSEGV: no compatibility ABI to reach
	}
	if got := field(out, "status"); got != want {
		t.Errorf("the probe in a job: status %s, want %s (output %q)", got, want, out)
	}
}

// seccompArches reads the seccomp architectures of the spec containerd
// holds for a container: what sharq gave runc, not what it meant to.
func seccompArches(ctx context.Context, t *testing.T, id string) []specs.Arch {
	t.Helper()
	cl, err := client.New(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx = namespaces.WithNamespace(ctx, namespace)
	c, err := cl.LoadContainer(ctx, id)
	if err != nil {
		t.Fatalf("container %s: %v", id, err)
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		t.Fatalf("container %s: spec: %v", id, err)
	}
	if spec.Linux == nil || spec.Linux.Seccomp == nil {
		t.Fatalf("container %s has no seccomp profile", id)
	}
	return spec.Linux.Seccomp.Architectures
}

func kernelRelease() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return "?"
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
