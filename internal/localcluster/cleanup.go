package localcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"golang.org/x/sys/unix"

	"sharq/runtime"
)

// removeContainers stops and removes the job containers of the cluster's
// nodes (runtime List, Stop, Wait, Remove). With sweepAll (the containerd
// is the cluster's own) it then deletes every container left in any
// namespace. It returns how many it removed.
func (l *layout) removeContainers(ctx context.Context, sweepAll bool) (int, error) {
	var errs []error
	n := 0
	for _, node := range l.nodes {
		rt, err := runtime.NewContainerd(ctx, l.ctrSock, l.cfg.Runtime.Namespace, runtime.WithNode(node),
			runtime.WithLogger(slog.New(slog.DiscardHandler)))
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
		m, err := sweepContainers(ctx, l.ctrSock)
		n += m
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// sweepContainers kills and deletes every task and container of every
// namespace of the containerd at socket.
func sweepContainers(ctx context.Context, socket string) (int, error) {
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
	}
	return n, errors.Join(errs...)
}

// countContainers counts the containers of namespace at socket.
func countContainers(ctx context.Context, socket, namespace string) (int, error) {
	cl, err := client.New(socket, client.WithTimeout(5*time.Second))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctrs, err := cl.Containers(namespaces.WithNamespace(ctx, namespace))
	return len(ctrs), err
}

// removeNamespaceDirs removes, when empty, the directories runc makes for
// a namespace and leaves behind: its state directory under
// /run/containerd/runc and the parent cgroup /<namespace> in every cgroup
// hierarchy.
func removeNamespaceDirs(namespace string) {
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

type mount struct{ point, fstype string }

// parseMountinfo reads /proc/self/mountinfo's mount points and types.
func parseMountinfo(r io.Reader) []mount {
	var out []mount
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mount{point: unescapeMount(fields[4]), fstype: fields[sep+1]})
	}
	return out
}

// MountsUnder lists the mount points strictly below the given directories,
// deepest first.
func MountsUnder(dirs ...string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	for _, m := range parseMountinfo(f) {
		for _, d := range dirs {
			if strings.HasPrefix(m.point, filepath.Clean(d)+"/") {
				points = append(points, m.point)
				break
			}
		}
	}
	sort.SliceStable(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	return points, nil
}

// unmountUnder lazily unmounts every mount point below dirs, deepest first.
func unmountUnder(dirs ...string) error {
	points, err := MountsUnder(dirs...)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, ok := octal(s[i+1 : i+4]); ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal(s string) (byte, bool) {
	var v int
	for _, ch := range s {
		if ch < '0' || ch > '7' {
			return 0, false
		}
		v = v*8 + int(ch-'0')
	}
	if v > 255 {
		return 0, false
	}
	return byte(v), true
}

// removeFiles removes what the cluster wrote: the spool, checkpoints, node
// state, the containerd directory when it was the cluster's own, the
// controller's socket, the secret, the fake GPUs; then every directory of
// RunDir left empty. Logs and the client commands stay. It never removes
// anything outside RunDir and StateDir.
func (l *layout) removeFiles(ownContainerd bool) error {
	paths := []string{l.cfg.Cluster.SpoolDir, l.cfg.Cluster.CheckpointRoot, l.nodeDir,
		l.cfg.Cluster.Socket, l.cfg.Cluster.SecretFile}
	paths = append(paths, l.devices...)
	if ownContainerd {
		paths = append(paths, l.ctrDir, l.ctrSock, l.ctrSock+".ttrpc")
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
