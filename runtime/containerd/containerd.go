package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"

	"github.com/sharq-hpc/sharq/runtime"
)

var _ runtime.Runtime = (*Containerd)(nil)

// DefaultNamespace is the containerd namespace of sharq's containers.
const DefaultNamespace = "sharq"

// Container labels.
const (
	LabelJob  = "sharq.job"
	LabelNode = "sharq.node"
	LabelRun  = "sharq.run"
	// LabelStop is set (to the time, RFC 3339) when Stop is first called;
	// it makes a death by SIGTERM/SIGKILL count as 256+N (PBSExitStatus).
	LabelStop = "sharq.stop"
)

// Containerd runs jobs as containerd containers (runc), one container per
// job on this node, named ContainerID(node, job) and labelled with
// LabelJob, LabelNode, LabelRun. Containers outlive the Containerd value
// and the process: a new Containerd for the same node finds them with
// List and follows them with Wait.
//
// Stop's SIGKILL timer runs in this process: if it ends (or Close is
// called) during a grace period, the job keeps running until Stop is
// called again, which the node daemon does when it re-adopts the job.
type Containerd struct {
	client    *client.Client
	namespace string
	node      string
	lazy      bool
	snapMu    sync.Mutex
	snap      string     // "" until detected
	images    imageCache // prepared images of snap
	host      host
	hostRoot  string // see runtime.DefaultHostRootDir
	log       *slog.Logger
	dialOpts  []grpc.DialOption // more options of the daemon connection

	ctx    context.Context // ends at Close: SIGKILL timers
	cancel context.CancelFunc
	mu     sync.Mutex
	timers map[string]*stopTimer // by job id
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
}

type stopTimer struct {
	deadline time.Time
	cancel   context.CancelFunc
}

// Option configures NewContainerd.
type Option func(*Containerd)

// WithNode sets this node's name (default: the host name). List returns
// only this node's containers, so node daemons can share one containerd.
func WithNode(name string) Option { return func(c *Containerd) { c.node = name } }

// WithHostRootDir sets the empty directory host-rootfs containers are made
// on (default DefaultHostRootDir).
func WithHostRootDir(dir string) Option { return func(c *Containerd) { c.hostRoot = dir } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *Containerd) { c.log = l } }

// NewContainerd connects to the containerd at socket and uses namespace
// (DefaultNamespace if empty).
func NewContainerd(ctx context.Context, socket, namespace string, opts ...Option) (*Containerd, error) {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	c := &Containerd{namespace: namespace, log: slog.Default(), timers: map[string]*stopTimer{}, hostRoot: runtime.DefaultHostRootDir}
	for _, o := range opts {
		o(c)
	}
	if c.node == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("containerd runtime: node name: %w", err)
		}
		c.node = h
	}
	c.host = defaultHost()
	cl, err := client.New(socket, client.WithDefaultNamespace(namespace), client.WithExtraDialOpts(c.dialOpts))
	if err != nil {
		return nil, fmt.Errorf("containerd runtime: connect %s: %w", socket, err)
	}
	ctx = namespaces.WithNamespace(ctx, namespace)
	c.client = cl
	if _, err := cl.Version(ctx); err != nil {
		if !c.lazy {
			cl.Close()
			return nil, fmt.Errorf("containerd runtime: %s: %w", socket, err)
		}
		c.log.Warn("containerd does not answer yet; the runtime is unhealthy until it does", "socket", socket, "err", err)
	} else if _, err := c.snapshotter(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("containerd runtime: %w", err)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func defaultHost() host {
	h := host{lookPath: exec.LookPath, path: os.Getenv("PATH")}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.memTotal = int64(si.Totalram) * int64(si.Unit)
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
		h.nofile = rl.Max
	}
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil {
		h.memlock = rl.Max
	}
	if h.path == "" {
		h.path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	return h
}

// WithLazyDaemon lets NewContainerd succeed while containerd does not
// answer (a node daemon started before it): Health reports it, and the
// snapshotter is chosen once the daemon answers.
func WithLazyDaemon() Option { return func(c *Containerd) { c.lazy = true } }

// snapshotter returns the snapshotter containers use, detecting it on the
// first call that reaches the daemon.
func (c *Containerd) snapshotter(ctx context.Context) (string, error) {
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	if c.snap != "" {
		return c.snap, nil
	}
	snap, err := DetectSnapshotter(ctx, c.client)
	if err != nil {
		return "", err
	}
	c.snap = snap
	return snap, nil
}

// Node is the node name the runtime labels and lists containers by.
func (c *Containerd) Node() string { return c.node }

// Snapshotter is the snapshotter containers use ("" until the daemon
// has answered, with WithLazyDaemon).
func (c *Containerd) Snapshotter() string {
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	return c.snap
}

func (c *Containerd) nsctx(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, c.namespace)
}

// Start creates and starts the job's container; see Runtime.
func (c *Containerd) Start(ctx context.Context, s runtime.Spec) error {
	ctx = c.nsctx(ctx)
	if s.Node == "" {
		s.Node = c.node
	}
	if s.Node != c.node {
		return fmt.Errorf("%w: job %s is for node %s, this runtime is node %s", ErrBadSpec, s.JobID, s.Node, c.node)
	}
	if err := validate(s); err != nil {
		return err
	}
	id := runtime.ContainerID(c.node, s.JobID)
	if _, err := c.client.LoadContainer(ctx, id); err == nil {
		return fmt.Errorf("start job %s: %w", s.JobID, runtime.ErrExists)
	} else if !errdefs.IsNotFound(err) {
		return fmt.Errorf("start job %s: %w", s.JobID, err)
	}
	var img *preparedClientImage // nil: the host's root
	if s.Image != runtime.HostImage {
		var err error
		if img, err = c.image(ctx, s); err != nil {
			return err
		}
	}
	// The job's paths, opened as its user (access.go); they stay open
	// until the container's mounts are checked against them.
	pins, err := runtime.OpenJobPaths(s)
	if err != nil {
		return fmt.Errorf("start job %s: %w", s.JobID, err)
	}
	defer pins.Close()
	opts, err := specOpts(s, c.host)
	if err != nil {
		return fmt.Errorf("start job %s: %w: %w", s.JobID, ErrBadSpec, err)
	}
	labels := client.WithContainerLabels(map[string]string{
		LabelJob:  s.JobID,
		LabelNode: c.node,
		LabelRun:  strconv.Itoa(s.Run),
	})
	var ctr client.Container
	if img == nil {
		// No image and no snapshot: the root is the host's own.
		if err := hostRootDir(c.hostRoot); err != nil {
			return fmt.Errorf("start job %s: %w", s.JobID, err)
		}
		ctr, err = c.client.NewContainer(ctx, id, labels, client.WithNewSpec(append(opts, hostRootOpts(c.hostRoot))...))
	} else {
		ctr, err = c.newImageContainer(ctx, id, s, img, labels, opts)
	}
	if errdefs.IsAlreadyExists(err) {
		return fmt.Errorf("start job %s: %w", s.JobID, runtime.ErrExists)
	}
	if err != nil {
		return runtimeFailure(s.JobID, "create container", err)
	}
	task, err := ctr.NewTask(ctx, cio.NullIO)
	if err != nil {
		c.discard(ctr, nil)
		return runtimeFailure(s.JobID, "create task", err)
	}
	if err := pins.Verify(task.Pid(), s); err != nil {
		c.discard(ctr, task)
		return fmt.Errorf("start job %s: %w", s.JobID, err)
	}
	if err := task.Start(ctx); err != nil {
		c.discard(ctr, task)
		return runtimeFailure(s.JobID, "start task", err)
	}
	c.log.Info("job container started", "job", s.JobID, "run", s.Run, "container", id, "pid", task.Pid())
	return nil
}

// image finds the job's image in containerd and prepares it (unpacked for
// the snapshotter, config and layers read) once per image digest; see
// imagecache.go.
func (c *Containerd) image(ctx context.Context, s runtime.Spec) (*preparedClientImage, error) {
	snap, err := c.snapshotter(ctx)
	if err != nil {
		return nil, fmt.Errorf("start job %s: %w", s.JobID, err)
	}
	img, err := c.client.GetImage(ctx, s.Image)
	if err != nil {
		return nil, fmt.Errorf("start job %s: image %s: %w", s.JobID, s.Image, err)
	}
	p := c.images.get(img.Target().Digest)
	cached := p != nil
	if !cached {
		if p, err = prepareImage(ctx, img, snap); err != nil {
			return nil, fmt.Errorf("start job %s: %w", s.JobID, err)
		}
		c.images.put(img.Target().Digest, p)
	}
	return &preparedClientImage{Image: img, p: p, snap: snap, cached: cached}, nil
}

// newImageContainer creates the container on a new snapshot of img. When
// the snapshot's parent is gone although img was prepared before (its
// unpacked layers removed behind the node's back), img is prepared again
// and the creation tried once more.
func (c *Containerd) newImageContainer(ctx context.Context, id string, s runtime.Spec, img *preparedClientImage, labels client.NewContainerOpts, opts []oci.SpecOpts) (client.Container, error) {
	create := func(img *preparedClientImage) (client.Container, error) {
		return c.client.NewContainer(ctx, id, labels,
			client.WithImage(img),
			client.WithSnapshotter(img.snap),
			client.WithNewSnapshot(id, img),
			client.WithNewSpec(append([]oci.SpecOpts{oci.WithImageConfig(img)}, opts...)...))
	}
	ctr, err := create(img)
	if !img.cached || !errdefs.IsNotFound(err) {
		return ctr, err
	}
	dgst := img.Target().Digest
	c.log.Warn("the unpacked layers of an image are gone; preparing it again", "job", s.JobID, "image", s.Image, "digest", dgst, "err", err)
	c.images.forget(dgst)
	p, perr := prepareImage(ctx, img.Image, img.snap)
	if perr != nil {
		return nil, perr
	}
	c.images.put(dgst, p)
	return create(&preparedClientImage{Image: img.Image, p: p, snap: img.snap})
}

// discard removes what a failed Start created.
func (c *Containerd) discard(ctr client.Container, task client.Task) {
	ctx, cancel := context.WithTimeout(c.nsctx(context.Background()), 30*time.Second)
	defer cancel()
	if task != nil {
		if _, err := task.Delete(ctx, client.WithProcessKill); err != nil {
			c.log.Warn("delete task of failed start", "container", ctr.ID(), "err", err)
		}
	}
	if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil {
		c.log.Warn("delete container of failed start", "container", ctr.ID(), "err", err)
	}
}

// load finds the job's container; ErrNotFound when there is none.
func (c *Containerd) load(ctx context.Context, jobID string) (client.Container, error) {
	ctr, err := c.client.LoadContainer(ctx, runtime.ContainerID(c.node, jobID))
	if errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("job %s on %s: %w", jobID, c.node, runtime.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", jobID, err)
	}
	return ctr, nil
}

// Stop sends SIGTERM to every process of the job's container and arms a
// timer that sends SIGKILL after grace; see Runtime. Stopping a job that
// already exited does nothing. A second Stop sends SIGTERM again and keeps
// the earlier of the two SIGKILL deadlines.
func (c *Containerd) Stop(ctx context.Context, jobID string, grace time.Duration) error {
	ctx = c.nsctx(ctx)
	ctr, err := c.load(ctx, jobID)
	if err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	task, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stop job %s: %w", jobID, err)
	}
	st, err := task.Status(ctx)
	if err != nil {
		return fmt.Errorf("stop job %s: %w", jobID, err)
	}
	if st.Status == client.Stopped {
		return nil // it ended on its own: its status stays its own
	}
	labels, err := ctr.Labels(ctx)
	if err != nil {
		return fmt.Errorf("stop job %s: %w", jobID, err)
	}
	if labels[LabelStop] == "" {
		if _, err := ctr.SetLabels(ctx, map[string]string{LabelStop: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
			return fmt.Errorf("stop job %s: label: %w", jobID, err)
		}
	}
	if err := kill(ctx, task, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop job %s: SIGTERM: %w", jobID, err)
	}
	c.log.Info("job stopping", "job", jobID, "grace", grace)
	c.armKill(jobID, task, grace)
	return nil
}

// Signal sends sig to every process of the job's container; see Runtime.
func (c *Containerd) Signal(ctx context.Context, jobID string, sig syscall.Signal) error {
	ctx = c.nsctx(ctx)
	ctr, err := c.load(ctx, jobID)
	if err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	task, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("signal job %s: %w", jobID, err)
	}
	if err := kill(ctx, task, sig); err != nil {
		return fmt.Errorf("signal job %s: %v: %w", jobID, sig, err)
	}
	c.log.Info("job signalled", "job", jobID, "signal", sig)
	return nil
}

// kill signals every process of the task; a task already gone is fine.
func kill(ctx context.Context, task client.Task, sig syscall.Signal) error {
	err := task.Kill(ctx, sig, client.WithKillAll)
	if err == nil || errdefs.IsNotFound(err) || errdefs.IsFailedPrecondition(err) {
		return nil
	}
	return err
}

// armKill sends SIGKILL to the job once grace has passed, unless its task
// exits first or the runtime is closed.
func (c *Containerd) armKill(jobID string, task client.Task, grace time.Duration) {
	deadline := time.Now().Add(grace)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		return
	}
	if t, ok := c.timers[jobID]; ok {
		if !deadline.Before(t.deadline) {
			return
		}
		t.cancel()
	}
	ctx, cancel := context.WithCancel(c.nsctx(c.ctx))
	t := &stopTimer{deadline: deadline, cancel: cancel}
	c.timers[jobID] = t
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			cancel()
			c.mu.Lock()
			if c.timers[jobID] == t {
				delete(c.timers, jobID)
			}
			c.mu.Unlock()
		}()
		exited, err := task.Wait(ctx)
		if err != nil {
			exited = nil // no exit notice: rely on the timer alone
		}
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-ctx.Done():
			return
		case <-exited:
			return
		case <-timer.C:
		}
		if err := kill(ctx, task, syscall.SIGKILL); err != nil {
			c.log.Error("SIGKILL after grace", "job", jobID, "err", err)
			return
		}
		c.log.Info("job killed after grace", "job", jobID)
	}()
}

// Wait blocks until the job's container has exited and returns its PBS
// exit status (PBSExitStatus); see Runtime.
func (c *Containerd) Wait(ctx context.Context, jobID string) (code int, err error) {
	ctx = c.nsctx(ctx)
	defer func() {
		// A call cut short by ctx fails with a gRPC status; callers look
		// for the context's own error.
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("wait job %s: %w (%v)", jobID, ctx.Err(), err)
		}
	}()
	ctr, err := c.load(ctx, jobID)
	if err != nil {
		return 0, fmt.Errorf("wait: %w", err)
	}
	task, err := ctr.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return runtime.ExitStatusLost, nil
	}
	if err != nil {
		return 0, fmt.Errorf("wait job %s: %w", jobID, err)
	}
	st, err := task.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("wait job %s: %w", jobID, err)
	}
	if st.Status == client.Created {
		return runtime.ExitStatusLost, nil
	}
	var status uint32
	if st.Status == client.Stopped {
		status = st.ExitStatus
	} else {
		// The RPC gets its own context, so that ctx ending is reported
		// as ctx's error, not as whatever the daemon says first.
		rpcCtx, cancelRPC := context.WithCancel(context.WithoutCancel(ctx))
		defer cancelRPC()
		exited, err := task.Wait(rpcCtx)
		if err != nil {
			return 0, fmt.Errorf("wait job %s: %w", jobID, err)
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("wait job %s: %w", jobID, ctx.Err())
		case es := <-exited:
			if status, _, err = es.Result(); err != nil {
				return 0, fmt.Errorf("wait job %s: %w", jobID, err)
			}
		}
	}
	labels, err := ctr.Labels(ctx)
	if err != nil {
		return 0, fmt.Errorf("wait job %s: %w", jobID, err)
	}
	return runtime.PBSExitStatus(status, labels[LabelStop] != ""), nil
}

// List returns this node's job containers; see Runtime.
func (c *Containerd) List(ctx context.Context) ([]runtime.Task, error) {
	ctx = c.nsctx(ctx)
	ctrs, err := c.client.Containers(ctx, fmt.Sprintf("labels.%q==%q", LabelNode, c.node))
	if err != nil {
		return nil, fmt.Errorf("list containers of %s: %w", c.node, err)
	}
	var out []runtime.Task
	for _, ctr := range ctrs {
		labels, err := ctr.Labels(ctx)
		if errdefs.IsNotFound(err) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("list containers of %s: %w", c.node, err)
		}
		if labels[LabelJob] == "" {
			continue
		}
		run, _ := strconv.Atoi(labels[LabelRun])
		t := runtime.Task{JobID: labels[LabelJob], Node: labels[LabelNode], Run: run}
		task, err := ctr.Task(ctx, nil)
		switch {
		case errdefs.IsNotFound(err):
			t.ExitStatus = runtime.ExitStatusLost
		case err != nil:
			return nil, fmt.Errorf("list job %s: %w", t.JobID, err)
		default:
			st, err := task.Status(ctx)
			if errdefs.IsNotFound(err) {
				t.ExitStatus = runtime.ExitStatusLost
				break
			}
			if err != nil {
				return nil, fmt.Errorf("list job %s: %w", t.JobID, err)
			}
			switch st.Status {
			case client.Stopped:
				t.ExitStatus = runtime.PBSExitStatus(st.ExitStatus, labels[LabelStop] != "")
			case client.Created:
				t.ExitStatus = runtime.ExitStatusLost
			default: // running, paused, pausing
				t.Running = true
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// Remove deletes the exited job's task, container and snapshot; a running
// job gives ErrRunning. See Runtime.
func (c *Containerd) Remove(ctx context.Context, jobID string) error {
	ctx = c.nsctx(ctx)
	ctr, err := c.load(ctx, jobID)
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	task, err := ctr.Task(ctx, nil)
	switch {
	case errdefs.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("remove job %s: %w", jobID, err)
	default:
		st, err := task.Status(ctx)
		if err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("remove job %s: %w", jobID, err)
		}
		if err == nil && st.Status != client.Stopped && st.Status != client.Created {
			return fmt.Errorf("remove job %s: %w", jobID, runtime.ErrRunning)
		}
		// A stopped task has no process left (its init was the PID
		// namespace's, whose end kills the rest): no kill before the
		// delete, which would cost a runc run and two calls. A created
		// one's init still waits to be started.
		var kill []client.ProcessDeleteOpts
		if err != nil || st.Status != client.Stopped {
			kill = append(kill, client.WithProcessKill)
		}
		if _, err := task.Delete(ctx, kill...); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("remove job %s: delete task: %w", jobID, err)
		}
	}
	if err := ctr.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("remove job %s: delete container: %w", jobID, err)
	}
	c.mu.Lock()
	if t, ok := c.timers[jobID]; ok {
		t.cancel()
	}
	c.mu.Unlock()
	return nil
}

// healthTimeout bounds Health's call.
const healthTimeout = 5 * time.Second

// Health asks containerd for its version; see Runtime.
func (c *Containerd) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(c.nsctx(ctx), healthTimeout)
	defer cancel()
	if _, err := c.client.Version(ctx); err != nil {
		return fmt.Errorf("%w: containerd: %w", runtime.ErrUnavailable, err)
	}
	return nil
}

// Close cancels pending SIGKILL timers (the containers keep running) and
// closes the connection.
func (c *Containerd) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.cancel()
		c.mu.Unlock()
		c.wg.Wait()
		if err := c.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
			c.closeErr = fmt.Errorf("close containerd runtime: %w", err)
		}
	})
	return c.closeErr
}
