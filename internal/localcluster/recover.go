package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/internal/ctrd"
)

// recoverLeftovers cleans up after an earlier run that did not stop
// cleanly (kill -9, an OOM kill, a closed terminal, a reboot), before a
// new cluster starts, and says what it found, one line each: the
// processes its lock file names that still run, the job containers its
// containerd still held (found by starting that containerd once more on
// its own state, so that containerd itself deletes tasks, runc state,
// cgroups and snapshots), shims left without a daemon, mounts, and the
// files of the earlier run (containerd's directory, sockets, fake GPUs,
// secret, spool, node state). It returns those lines. stale are the lock
// file's entries of the earlier run (acquireLock).
//
// It runs with the lock held, so no live make up owns any of this, and
// after checkFree, so no foreign controller does either; a
// containerd that answers at the cluster's socket is not the earlier
// run's (that one was stopped first) and is left alone, as start uses it.
func (u *up) recoverLeftovers(ctx context.Context, stale []pidEntry) ([]string, error) {
	l := u.l
	var found []string
	for _, e := range stale {
		if e.name == "sharq-up" {
			found = append(found, fmt.Sprintf("lock file %s of sharq-up pid %d, which is gone", l.lock, e.pid))
		}
	}
	for _, s := range stopStale(stale, 15*time.Second) {
		found = append(found, "stopped "+s+", left running by it")
	}
	// Nothing is removed while a controller that this cluster did not
	// start answers at its socket, or something holds its ports.
	if err := u.checkFree(ctx); err != nil {
		return found, err
	}
	var errs []error
	if fi, err := os.Stat(l.ctrDir); err == nil && fi.IsDir() && ctrd.Ping(ctx, l.ctrSock) != nil {
		n, err := u.sweepOldContainerd(ctx)
		if n > 0 {
			found = append(found, fmt.Sprintf("deleted %d job container(s) still held by the earlier run's containerd", n))
		}
		errs = append(errs, err)
	}
	if ctrd.Ping(ctx, l.ctrSock) != nil {
		n, err := ctrd.KillShims(l.ctrSock)
		if n > 0 {
			found = append(found, fmt.Sprintf("killed %d containerd shim(s) left without their containerd", n))
		}
		errs = append(errs, err)
	}
	if points, err := MountsUnder(l.run, l.state); err == nil && len(points) > 0 {
		found = append(found, fmt.Sprintf("unmounted %d mount(s) under %s and %s", len(points), l.run, l.state))
	}
	errs = append(errs, ctrd.UnmountUnder(l.run, l.state))
	ctrd.RemoveNamespaceDirs(l.cfg.Runtime.Namespace)
	own := ctrd.Ping(ctx, l.ctrSock) != nil
	for _, f := range l.files(own) {
		if _, err := os.Lstat(f.path); err != nil {
			continue
		}
		found = append(found, "removed "+f.what+" "+f.path)
		if err := os.RemoveAll(f.path); err != nil {
			errs = append(errs, err)
		}
	}
	if devs := l.existing(l.devices); len(devs) > 0 {
		found = append(found, "removed fake GPUs "+compactDevices(devs))
		for _, d := range devs {
			errs = append(errs, os.Remove(d))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return found, fmt.Errorf("cleaning up after an earlier make up: %w", err)
	}
	return found, nil
}

// sweepOldContainerd starts containerd once more on the earlier run's
// state, deletes every container it still holds (their tasks are killed)
// and stops it again.
func (u *up) sweepOldContainerd(ctx context.Context) (int, error) {
	if err := u.startContainerd(ctx); err != nil {
		return 0, fmt.Errorf("containerd on the earlier run's state: %w", err)
	}
	p := u.containerd
	u.containerd = nil
	u.procs = u.procs[:len(u.procs)-1]
	cctx, cancel := context.WithTimeout(ctx, u.o.Timeout)
	n, err := ctrd.Sweep(cctx, u.l.ctrSock)
	cancel()
	p.stop(15 * time.Second)
	return n, err
}

// clusterFile is a file or directory one run of the cluster makes.
type clusterFile struct{ what, path string }

// files are what a run of the cluster leaves until it stops (not the logs,
// the lock file or the fake GPUs, which are listed apart): with
// ownContainerd, containerd's directory and sockets too.
func (l *layout) files(ownContainerd bool) []clusterFile {
	c := l.cfg.Cluster
	fs := []clusterFile{
		{"the controller's socket", c.Socket}, {"the node secret", c.SecretFile},
		{"the spool", c.SpoolDir}, {"the checkpoints", c.CheckpointRoot}, {"the nodes' state", l.nodeDir},
	}
	if c.ClientListen != "" {
		fs = append(fs, clusterFile{"munged's socket", c.MungeSocket}, clusterFile{"munged's socket lock", c.MungeSocket + ".lock"})
	}
	if ownContainerd {
		fs = append(fs, clusterFile{"containerd's state", l.ctrDir},
			clusterFile{"containerd's socket", l.ctrSock}, clusterFile{"containerd's socket", l.ctrSock + ".ttrpc"})
	}
	out := fs[:0]
	for _, f := range fs {
		if l.owns(f.path) {
			out = append(out, f)
		}
	}
	return out
}

// existing returns the paths that exist.
func (l *layout) existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// reportLeftovers prints what recoverLeftovers found, one line each.
func (u *up) reportLeftovers(found []string) {
	if len(found) == 0 {
		return
	}
	u.printf("A previous make up did not stop cleanly; cleaning up after it:\n")
	for _, f := range found {
		u.printf("  %s\n", strings.TrimSpace(f))
	}
}
