package ctrd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"golang.org/x/sys/unix"
)

// Sweep kills and deletes every task and container of every namespace of
// the containerd at socket (snapshots included), then removes each
// namespace's directories runc leaves (RemoveNamespaceDirs). It returns how
// many containers it deleted.
func Sweep(ctx context.Context, socket string) (int, error) {
	cl, err := client.New(socket, client.WithTimeout(5*time.Second))
	if err != nil {
		return 0, fmt.Errorf("containers at %s: %w", socket, err)
	}
	defer cl.Close()
	nss, err := cl.NamespaceService().List(ctx)
	if err != nil {
		return 0, fmt.Errorf("containers at %s: %w", socket, err)
	}
	var errs []error
	n := 0
	for _, ns := range nss {
		nctx := namespaces.WithNamespace(ctx, ns)
		ctrs, err := cl.Containers(nctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, ctr := range ctrs {
			if task, err := ctr.Task(nctx, nil); err == nil {
				if _, err := task.Delete(nctx, client.WithProcessKill); err != nil {
					errs = append(errs, fmt.Errorf("delete task %s/%s: %w", ns, ctr.ID(), err))
				}
			}
			if err := ctr.Delete(nctx, client.WithSnapshotCleanup); err != nil {
				errs = append(errs, fmt.Errorf("delete container %s/%s: %w", ns, ctr.ID(), err))
				continue
			}
			n++
		}
		RemoveNamespaceDirs(ns)
	}
	return n, errors.Join(errs...)
}

// RemoveNamespaceDirs removes, when empty, the directories runc makes for
// a namespace and leaves behind: its state directory under
// /run/containerd/runc (the default root) and the parent cgroup
// /<namespace> in every cgroup hierarchy (runc removes only the
// containers' own cgroups).
func RemoveNamespaceDirs(namespace string) {
	_ = unix.Rmdir(filepath.Join("/run/containerd/runc", namespace))
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	for _, m := range parseMountinfo(f) {
		if m.fstype == "cgroup" || m.fstype == "cgroup2" {
			_ = unix.Rmdir(filepath.Join(m.point, namespace))
		}
	}
}
