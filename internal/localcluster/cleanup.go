package localcluster

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/internal/ctrd"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/containerd"
)

// removeContainers stops and removes the job containers of the cluster's
// nodes (runtime List, Stop, Wait, Remove). With sweepAll (the containerd
// is the cluster's own) it then deletes every container left in any
// namespace. It returns how many it removed.
func (l *layout) removeContainers(ctx context.Context, sweepAll bool) (int, error) {
	var errs []error
	n := 0
	for _, node := range l.nodes {
		rt, err := containerd.NewContainerd(ctx, l.ctrSock, l.cfg.Runtime.Namespace, containerd.WithNode(node),
			containerd.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tasks, err := rt.List(ctx)
		if err != nil {
			errs = append(errs, err)
		}
		for _, t := range tasks {
			if t.Running {
				if err := rt.Stop(ctx, t.JobID, 0); err != nil && !errors.Is(err, runtime.ErrNotFound) {
					errs = append(errs, err)
				}
				wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				_, _ = rt.Wait(wctx, t.JobID)
				cancel()
			}
			if err := rt.Remove(ctx, t.JobID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
				errs = append(errs, err)
				continue
			}
			n++
		}
		errs = append(errs, rt.Close())
	}
	if sweepAll {
		m, err := ctrd.Sweep(ctx, l.ctrSock)
		n += m
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// MountsUnder lists the mount points strictly below the given directories,
// deepest first (ctrd.MountsUnder).
func MountsUnder(dirs ...string) ([]string, error) { return ctrd.MountsUnder(dirs...) }

// removeFiles removes what the cluster wrote (layout.files: the spool,
// checkpoints, node state, sockets, the secret, containerd's directory
// when it was the cluster's own) and the fake GPUs; then every directory
// of RunDir left empty. Logs and the client commands stay. It never
// removes anything outside RunDir and StateDir.
func (l *layout) removeFiles(ownContainerd bool) error {
	paths := l.devices
	for _, f := range l.files(ownContainerd) {
		paths = append(paths, f.path)
	}
	var errs []error
	for _, p := range paths {
		if !l.owns(p) {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
		}
	}
	pruneEmptyDirs(l.run)
	return errors.Join(errs...)
}

// pruneEmptyDirs removes dir's empty subdirectories, deepest first, and
// dir itself if that leaves it empty (the lock file is removed last, by
// the lock's release).
func pruneEmptyDirs(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = unix.Rmdir(dirs[i])
	}
}
