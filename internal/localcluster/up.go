package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/client"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/ctrd"
)

var (
	// ErrNotRoot: the local cluster starts containerd, makes device files
	// and runs jobs as another user.
	ErrNotRoot = errors.New("make up must run as root")
	// ErrForeignController means a controller that Up did not start
	// answers at the configured socket.
	ErrForeignController = errors.New("a sharq controller not started by make up answers at the socket")
	// ErrAddressInUse means the controller's listen address is taken.
	ErrAddressInUse = errors.New("the controller's listen address is in use")
	// ErrMissingBinary means BinDir lacks a daemon or client command.
	ErrMissingBinary = errors.New("missing binary (run make build)")
)

// up is one run of Up.
type up struct {
	o          Options
	l          *layout
	lock       *instanceLock
	procs      []*proc
	containerd *proc // nil when a containerd was already running
	ctld       *proc
	user       *demoUser
	logged     map[string]bool // processes whose log this run started
}

func (u *up) printf(format string, args ...any) { fmt.Fprintf(u.o.Out, format, args...) }

// Up brings up the local cluster, prints how to use it, and runs until ctx
// ends (make up's ^C) or one of its processes exits; then it stops every
// process it started, removes the cluster's containers, mounts and files
// (not the logs) and returns. An error from start-up or from a process that
// exited is returned after that cleanup.
func Up(ctx context.Context, o Options) error {
	o.setDefaults()
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: it starts containerd, makes device files and runs jobs as another user (sudo make up)", ErrNotRoot)
	}
	l, err := newLayout(o)
	if err != nil {
		return err
	}
	if err := checkBinaries(l.bin); err != nil {
		return err
	}
	u := &up{o: o, l: l, logged: map[string]bool{}}
	lock, stale, err := acquireLock(l.lock)
	if err != nil {
		if errors.Is(err, ErrAlreadyRunning) {
			return fmt.Errorf("%w\nUse it from another terminal:\n  export SHARQ_SOCKET=%s PATH=%s:$PATH\n  qstat -Q\nor stop it first with Ctrl-C in its terminal",
				err, l.cfg.Cluster.Socket, l.userBin)
		}
		return err
	}
	u.lock = lock
	defer func() {
		lock.release()
		_ = os.Remove(l.run) // when empty
	}()
	found, err := u.recoverLeftovers(ctx, stale)
	u.reportLeftovers(found)
	if err != nil {
		return err
	}
	err = u.start(ctx)
	if err == nil {
		u.printReady()
		err = u.watch(ctx)
	} else if ctx.Err() != nil {
		err = nil // interrupted while starting
	}
	u.printf("\nStopping the local cluster ...\n")
	return errors.Join(err, u.stop())
}

func checkBinaries(bin string) error {
	for _, name := range append([]string{"sharqctld", "sharqd"}, clientCommands...) {
		p := filepath.Join(bin, name)
		if fi, err := os.Stat(p); err != nil || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%w: %s", ErrMissingBinary, p)
		}
	}
	return nil
}

// checkFree refuses to start over a controller Up did not start, or when
// one of the cluster's ports stays taken.
func (u *up) checkFree(ctx context.Context) error {
	sock := u.l.cfg.Cluster.Socket
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err := client.Call(cctx, sock, api.Request{Op: api.OpShares})
	cancel()
	if err == nil {
		return fmt.Errorf("%w (%s); stop it first, or use it: export SHARQ_SOCKET=%s", ErrForeignController, sock, sock)
	}
	// Every port the cluster listens on: the controller's, the jobs'
	// client port, metrics and the node's sessions. A daemon of a run that
	// was just stopped may hold one for a moment while it exits.
	cl := u.l.cfg.Cluster
	deadline := time.Now().Add(portWait)
	for _, addr := range []string{cl.Listen, cl.ClientListen, cl.Metrics, cl.SessionListen} {
		if addr == "" {
			continue
		}
		for {
			ln, err := net.Listen("tcp", addr)
			if err == nil {
				ln.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%w: %s: %w (another sharq daemon? see ss -ltnp)", ErrAddressInUse, addr, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// portWait is how long checkFree waits for a port to come free.
const portWait = 10 * time.Second

// start brings the cluster up, step by step, saying what it does.
func (u *up) start(ctx context.Context) error {
	l := u.l
	for _, d := range []string{l.run, l.state} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(d, 0o755); err != nil { // users reach the socket and commands below
			return err
		}
	}
	if err := os.MkdirAll(l.logDir, 0o755); err != nil {
		return err
	}
	u.printf("Starting a local sharq cluster from %s\n", l.config)

	if ctrd.Ping(ctx, l.ctrSock) == nil {
		u.printf("  containerd already running at %s: using it\n", l.ctrSock)
	} else {
		if err := u.startContainerd(ctx); err != nil {
			return err
		}
		u.printf("  containerd started (private: socket %s, root %s)\n", l.ctrSock, l.ctrDir)
	}
	// A cluster starts empty: containers and state of an earlier run go.
	cctx, cancel := context.WithTimeout(ctx, u.o.Timeout)
	n, err := l.removeContainers(cctx, u.containerd != nil)
	cancel()
	if err != nil {
		return fmt.Errorf("remove old containers: %w", err)
	}
	if n > 0 {
		u.printf("  removed %d container(s) left by an earlier run\n", n)
	}
	for _, p := range []string{l.cfg.Cluster.SpoolDir, l.cfg.Cluster.CheckpointRoot, l.nodeDir, l.cfg.Cluster.Socket} {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(l.cfg.Cluster.CheckpointRoot, 0o755); err != nil {
		return err
	}

	if err := u.importImages(ctx); err != nil {
		return err
	}
	if err := ctrd.MakeFakeGPUs(l.devices, true); err != nil {
		return err
	}
	u.printf("  fake GPUs  %s (character devices with no driver)\n", compactDevices(l.devices))
	if err := writeSecret(l.cfg.Cluster.SecretFile); err != nil {
		return err
	}
	if err := installClients(l.bin, l.userBin); err != nil {
		return err
	}
	if err := u.startMunged(ctx); err != nil {
		return err
	}
	if l.userName != "" {
		if u.user, err = ensureUser(l.userName); err != nil {
			return err
		}
		if u.user.created {
			u.printf("  user       created %s (uid %d) to submit jobs as: the controller refuses root's jobs\n", u.user.name, u.user.uid)
		}
		if err := u.user.setupProfile(l.cfg.Cluster.Socket, l.userBin); err != nil {
			return err
		}
	}

	if u.ctld, err = u.startProcess("sharqctld", filepath.Join(l.bin, "sharqctld"), "--config", l.config); err != nil {
		return err
	}
	err = u.waitFor(ctx, u.ctld, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		_, err := client.Call(cctx, l.cfg.Cluster.Socket, api.Request{Op: api.OpShares})
		return err
	})
	if err != nil {
		return err
	}
	u.printf("  sharqctld  started, socket %s\n", l.cfg.Cluster.Socket)
	var nodes []*proc
	for _, n := range l.nodes {
		p, err := u.startProcess("sharqd-"+n, filepath.Join(l.bin, "sharqd"),
			"--config", l.config, "--node", n, "--state-dir", filepath.Join(l.nodeDir, n))
		if err != nil {
			return err
		}
		nodes = append(nodes, p)
	}
	for i, p := range nodes {
		name := l.nodes[i]
		var problems []string
		err := u.waitFor(ctx, p, func(ctx context.Context) error {
			st, err := nodeStatus(ctx, l.cfg.Cluster.Socket, name)
			if err != nil {
				return err
			}
			if st.State != "up" {
				return fmt.Errorf("node %s is %s", name, st.State)
			}
			problems = st.Problems
			return nil
		})
		if err != nil {
			return err
		}
		u.printf("  sharqd     node %s up\n", name)
		for _, pr := range problems {
			u.printf("             problem: %s\n", pr)
		}
		if declared, have := l.cfg.Nodes[i].CPUs, goruntime.NumCPU(); declared > have {
			u.printf("             (%s declares %d CPUs on this %d-CPU machine so that the tour's jobs all start\n"+
				"             at once: they share its CPUs, each within its own CPU quota)\n", filepath.Base(l.config), declared, have)
		}
	}
	return nil
}

func nodeStatus(ctx context.Context, socket, name string) (*api.NodeStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := client.Call(ctx, socket, api.Request{Op: api.OpNodes})
	if err != nil {
		return nil, err
	}
	for i := range resp.Nodes {
		if resp.Nodes[i].Name == name {
			return &resp.Nodes[i], nil
		}
	}
	return nil, fmt.Errorf("node %s not known to the controller", name)
}

// writeSecret writes a random node secret (root only, 0600) unless the
// file exists.
func writeSecret(path string) error {
	if _, err := os.Stat(path); err == nil {
		return os.Chmod(path, 0o600)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		return fmt.Errorf("secret: %w", err)
	}
	return nil
}

// compactDevices shows /d/gpu0 ... /d/gpu7 as /d/gpu0..gpu7.
func compactDevices(devs []string) string {
	switch len(devs) {
	case 0:
		return "(none)"
	case 1:
		return devs[0]
	}
	return devs[0] + ".." + filepath.Base(devs[len(devs)-1])
}

// watch waits until ctx ends (nil) or a process exits (its error).
func (u *up) watch(ctx context.Context) error {
	cases := make(chan *proc, len(u.procs))
	for _, p := range u.procs {
		go func() {
			select {
			case <-p.done:
				cases <- p
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case p := <-cases:
		return p.exitError()
	}
}

// printReady says where the cluster is and what to try next.
func (u *up) printReady() {
	l := u.l
	var shares []string
	for _, s := range l.cfg.Shares {
		shares = append(shares, fmt.Sprintf("%s (%d GPUs, %s)", s.Name, s.GPUs, s.Strategy))
	}
	u.printf("\nThe local sharq cluster %q is up: %s; shares %s.\n", l.cfg.Cluster.Name, nodeSummary(l.cfg), strings.Join(shares, ", "))
	u.printf("Controller socket: %s   Logs: %s/\n", l.cfg.Cluster.Socket, l.logDir)
	if m := l.cfg.Cluster.Metrics; m != "" {
		u.printf("Prometheus metrics: http://%s/metrics (contrib/prometheus, contrib/grafana)\n", m)
	}
	u.printf("\nIn another terminal, as root (admin commands and a look at the queues):\n")
	u.printf("  export SHARQ_SOCKET=%s PATH=%s:$PATH\n", l.cfg.Cluster.Socket, l.userBin)
	u.printf("  qstat -Q                  # shares: quota, GPUs in use, lent, borrowed\n")
	u.printf("  sharqctl show nodes       # the node and its GPUs\n")
	if u.user != nil {
		u.printf("\nJobs are submitted as an ordinary user (the controller refuses root's jobs):\n")
		u.printf("  su - %s                # its login shell has SHARQ_SOCKET and PATH set\n", u.user.name)
		u.printf("  qsub -q vision -l ngpus=2 -- /bin/sh -c 'echo GPUs $CUDA_VISIBLE_DEVICES; sleep 30'\n")
		u.printf("  qstat -a                  # the job; its output lands in ~/sh.o<number>\n")
		if hostImageAllowed(l.cfg) {
			u.printf("  qsub -q nlp --image host -- python3 -c 'import sys; print(sys.version)'\n")
			u.printf("                            # on this machine's own software, with %s mounted\n", mountList(l.cfg))
		}
	}
	u.printf("\nOr run the narrated demo: make demo.  Ctrl-C here stops the cluster and removes its containers.\n")
}

func nodeSummary(cfg *conf.Config) string {
	gpus := 0
	for _, n := range cfg.Nodes {
		gpus += n.GPUs
	}
	if len(cfg.Nodes) == 1 {
		return fmt.Sprintf("node %s with %d fake GPUs", cfg.Nodes[0].Name, gpus)
	}
	return fmt.Sprintf("%d nodes with %d fake GPUs", len(cfg.Nodes), gpus)
}

// stop stops the processes in order, removes the cluster's containers,
// mounts and files, and checks that nothing is left.
func (u *up) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []error
	// Node daemons first (they leave their containers running), then the
	// controller.
	for i := len(u.procs) - 1; i >= 0; i-- {
		if p := u.procs[i]; p != u.containerd {
			p.stop(15 * time.Second)
		}
	}
	removed := 0
	own := u.containerd != nil
	if (own && !u.containerd.exited()) || (!own && ctrd.Ping(ctx, u.l.ctrSock) == nil) {
		n, err := u.l.removeContainers(ctx, own)
		removed = n
		errs = append(errs, err)
	}
	if own {
		u.containerd.stop(15 * time.Second)
	}
	ctrd.RemoveNamespaceDirs(u.l.cfg.Runtime.Namespace)
	errs = append(errs, ctrd.UnmountUnder(u.l.run, u.l.state))
	errs = append(errs, u.l.removeFiles(own))
	if left, err := MountsUnder(u.l.run, u.l.state); err == nil && len(left) > 0 {
		errs = append(errs, fmt.Errorf("mounts left under the cluster's directories: %s", strings.Join(left, ", ")))
	}
	err := errors.Join(errs...)
	what := "containers"
	if removed == 1 {
		what = "container"
	}
	if err != nil {
		u.printf("Stopped, with problems (below). Logs: %s/\n", u.l.logDir)
	} else {
		u.printf("Stopped: daemons ended, %d job %s removed, no mounts left. Logs kept in %s/\n", removed, what, u.l.logDir)
	}
	return err
}
