package hostproc_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/hostproc"
	"github.com/sharq-hpc/sharq/runtime/runtimetest"
)

// TestConformance runs the runtime conformance suite against host
// processes: as root for a plain user and for root (memory limits through
// the machine's memory cgroups), as anyone else for that user (memory
// limits where a memory cgroup is writable, else declared missing).
func TestConformance(t *testing.T) {
	type user struct {
		name     string
		uid, gid uint32
	}
	users := []user{{"self", uint32(os.Geteuid()), uint32(os.Getegid())}}
	if os.Geteuid() == 0 {
		users = []user{{"user", 1000, 1000}, {"root", 0, 0}}
	}
	parent := fmt.Sprintf("sharq-hostproc-test-%d", os.Getpid())
	newRT := func(node string) *hostproc.Runtime {
		return hostproc.New(node, hostproc.WithCgroupParent(parent), hostproc.WithLogger(slog.New(slog.DiscardHandler)))
	}
	probe := newRT("probe")
	t.Cleanup(func() { probe.Close(); hostproc.RemoveCgroupParent(parent) })
	if !probe.MemoryLimits() {
		t.Log("no writable memory cgroup: the suite checks that memory limits are refused")
	}
	// As root, the memory path the kernel offers must be the one taken
	// (cgroup v2's memory.max and clone3 into the cgroup, or v1's), not a
	// silent fall back to refusing memory limits.
	if os.Geteuid() == 0 {
		mode, dir, why := kernelMemoryCgroup()
		switch {
		case mode == "":
			t.Logf("memory cgroups: none for root here (%s)", why)
		case !probe.MemoryLimits():
			t.Fatalf("the kernel offers a writable cgroup %s memory controller at %s, but hostproc takes none", mode, dir)
		default:
			if _, err := os.Stat(filepath.Join(dir, parent)); err != nil {
				t.Fatalf("hostproc's job cgroups are not under the cgroup %s memory controller: %v", mode, err)
			}
			t.Logf("memory cgroups: %s at %s", mode, dir)
		}
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			node := "hp-" + u.name
			runtimetest.Run(t, func(t *testing.T) runtime.Runtime { return newRT(node) }, runtimetest.Env{
				Node: node, UID: u.uid, GID: u.gid, NoMemoryLimits: !probe.MemoryLimits(),
			})
		})
	}
}
