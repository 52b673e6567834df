package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"golang.org/x/sys/unix"
)

// maxSocketPath is sun_path's size less the NUL and the ".ttrpc" suffix
// containerd adds for its second socket.
const maxSocketPath = 107 - len(".ttrpc")

// StartTimeout bounds how long StartContainerd waits for the daemon.
var StartTimeout = 30 * time.Second

// Daemon is a private containerd daemon.
type Daemon struct {
	Dir    string // holds root/, state/, opt/, config.toml, containerd.log, the socket
	Socket string // gRPC address (a Unix socket path)
	Log    string // the daemon's log file

	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// configTemplate is a version 2 config: only the plugins running
// containers from local images need (no CRI, no tracing, no aufs/btrfs/zfs/
// devmapper snapshotters; the v1 linux runtime stays, containerd 1.6's
// tasks service needs it), every path inside the daemon's own directory.
const configTemplate = `version = 2
root = %[1]q
state = %[2]q
oom_score = 0
disabled_plugins = [
  "io.containerd.grpc.v1.cri",
  "io.containerd.internal.v1.tracing",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
%[6]s]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
`

// StartContainerd starts a containerd whose files all live in dir; an empty
// dir makes a new /tmp/sharq-ctr-* directory (short, for the socket path).
// disable names more plugins to leave out (e.g.
// "io.containerd.snapshotter.v1.overlayfs"). It returns once the daemon
// answers a Version call. Stop it with Stop.
func StartContainerd(dir string, disable ...string) (*Daemon, error) {
	if dir == "" {
		d, err := os.MkdirTemp("/tmp", "sharq-ctr-")
		if err != nil {
			return nil, fmt.Errorf("start containerd: %w", err)
		}
		dir = d
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	c := &Daemon{Dir: dir, Socket: filepath.Join(dir, "c.sock"), Log: filepath.Join(dir, "containerd.log"), done: make(chan struct{})}
	if len(c.Socket) > maxSocketPath {
		return nil, fmt.Errorf("start containerd: socket path %s longer than %d bytes", c.Socket, maxSocketPath)
	}
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	config := filepath.Join(dir, "config.toml")
	var extra strings.Builder
	for _, p := range disable {
		fmt.Fprintf(&extra, "  %q,\n", p)
	}
	text := fmt.Sprintf(configTemplate, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.Socket, c.Socket+".ttrpc", filepath.Join(dir, "opt"), extra.String())
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	logf, err := os.Create(c.Log)
	if err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	defer logf.Close()
	c.cmd = exec.Command(bin, "--config", config)
	c.cmd.Stdout = logf
	c.cmd.Stderr = logf
	// Its own process group: a ^C in the test's terminal reaches the test,
	// which then stops the daemon in order.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start containerd: %w", err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.done)
	}()
	if err := c.waitReady(StartTimeout); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("start containerd in %s: %w\n%s", dir, err, tail(c.Log, 20))
	}
	return c, nil
}

func (c *Daemon) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-c.done:
			return fmt.Errorf("containerd exited: %v", c.waitErr)
		default:
		}
		if _, err := os.Stat(c.Socket); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = ping(ctx, c.Socket)
			cancel()
			if err == nil {
				return nil
			}
			if time.Now().After(deadline) {
				return err
			}
		} else if time.Now().After(deadline) {
			return fmt.Errorf("no socket after %v", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ping(ctx context.Context, socket string) error {
	cl, err := client.New(socket, client.WithTimeout(2*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = cl.Version(ctx)
	return err
}

// Stop kills and deletes every task and container the daemon holds (in
// every namespace, so no shim, cgroup or mount outlives the test), stops
// the daemon with SIGTERM (SIGKILL after 10 s), unmounts what is left
// under Dir and removes Dir. It is safe to call more than once.
func (c *Daemon) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		select {
		case <-c.done:
		default:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			errs = append(errs, c.cleanup(ctx))
			cancel()
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-c.done:
			case <-time.After(10 * time.Second):
				_ = c.cmd.Process.Kill()
				<-c.done
			}
		}
		if err := unmountUnder(c.Dir); err != nil {
			errs = append(errs, err)
		} else if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, err)
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// cleanup removes all tasks and containers, in every namespace.
func (c *Daemon) cleanup(ctx context.Context) error {
	cl, err := client.New(c.Socket, client.WithTimeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("cleanup containerd %s: %w", c.Socket, err)
	}
	defer cl.Close()
	nss, err := cl.NamespaceService().List(ctx)
	if err != nil {
		return fmt.Errorf("cleanup containerd %s: %w", c.Socket, err)
	}
	var errs []error
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
			}
		}
		removeCgroups(ns)
		// The runc shim's state directory of the namespace (default root).
		_ = unix.Rmdir(filepath.Join("/run/containerd/runc", ns))
	}
	return errors.Join(errs...)
}

// removeCgroups removes the (now empty) parent cgroup /<ns> that runc made
// for the namespace's containers, in every cgroup hierarchy; runc removes
// only the containers' own cgroups.
func removeCgroups(ns string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// ... mount-point ... - fstype source options
		sep := slices.Index(fields, "-")
		if sep < 0 || sep+1 >= len(fields) || len(fields) < 5 {
			continue
		}
		if fs := fields[sep+1]; fs == "cgroup" || fs == "cgroup2" {
			_ = unix.Rmdir(filepath.Join(unescapeMount(fields[4]), ns))
		}
	}
}

// unmountUnder lazily unmounts every mount point below dir, deepest first,
// so that removing dir never walks into a container's bind mounts.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if strings.HasPrefix(mp, dir+"/") {
			points = append(points, mp)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unmount %s: %w", p, err)
		}
	}
	return nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			ok := true
			for _, ch := range s[i+1 : i+4] {
				if ch < '0' || ch > '7' {
					ok = false
					break
				}
				v = v*8 + byte(ch-'0')
			}
			if ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Containerd starts a private containerd for tb, stops it when tb ends,
// and returns its socket.
func Containerd(tb testing.TB) (socket string) {
	tb.Helper()
	c, err := StartContainerd("")
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stop containerd: %v", err)
		}
	})
	return c.Socket
}

var nsCounter atomic.Int64

// Namespace returns a containerd namespace no other test process uses.
// runc keeps its state in /run/containerd/runc/<namespace>/<id> and the
// default cgroup path is /<namespace>/<id>, both shared by every containerd
// on the host: tests in parallel packages that reuse job and node names
// must not share a namespace.
func Namespace() string {
	return fmt.Sprintf("sharq-test-%d-%d", os.Getpid(), nsCounter.Add(1))
}
