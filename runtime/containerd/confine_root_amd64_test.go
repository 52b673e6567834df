//go:build !unit

package containerd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/sharq-hpc/sharq/runtime"
)

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
