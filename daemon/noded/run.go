package noded

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/secret"
	"github.com/sharq-hpc/sharq/runtime"
	"github.com/sharq-hpc/sharq/runtime/gpu"
)

// Sentinel errors of Run.
var (
	// ErrUnknownNode: the node is not in the configuration.
	ErrUnknownNode = errors.New("node not in the configuration")
	// ErrRefused: the controller refused the hello (welcome with an error).
	ErrRefused = errors.New("controller refused the node")
	// ErrBadSecret: the controller refused the secret. Run returns it: a
	// node with the wrong secret would be refused forever.
	ErrBadSecret = errors.New("controller refused the node's secret")
	// ErrBadCert: with mutual TLS, the controller refused the node's
	// certificate because it does not name this node. Run returns it: the
	// node would be refused forever with the certificate it loaded.
	ErrBadCert = errors.New("controller refused the node's certificate: it does not name this node")
)

// Options configure Run.
type Options struct {
	Config  *conf.Config
	Node    string          // this node's name in the configuration
	Runtime runtime.Runtime // the node's containers; Run does not close it
	// StateDir holds the node's job records; "" = DefaultStateDir(Node).
	// Each node daemon of a machine needs its own.
	StateDir string
	Logger   *slog.Logger // nil = slog.Default()
	// Dial connects to the controller; nil = Dialer(&Config.Cluster).
	Dial func(ctx context.Context) (net.Conn, error)
	// Discover finds NVIDIA GPUs; nil = gpu.Discover.
	Discover DiscoverFunc
	// WatchGPUs watches the GPUs' health (gpuhealth.go); nil =
	// gpu.WatchHealth where the inventory came from NVML, none otherwise.
	WatchGPUs WatchGPUsFunc
	// OpenSampler opens what samples the jobs' GPU use (gpuuse.go); nil =
	// gpu.OpenSampler where the inventory came from NVML, none otherwise.
	OpenSampler func() (GPUSampler, error)
	// Delays between reconnections; 0 = DefaultMinBackoff, DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
}

// maxRedirects bounds how many follower answers in a row the node follows
// without a backoff.
const maxRedirects = 3

// notLeaderError is a follower controller's refusing welcome.
type notLeaderError struct {
	from, leader, msg string
}

func (e *notLeaderError) Error() string { return "controller " + e.from + ": " + e.msg }

func (e *notLeaderError) Unwrap() error { return ErrRefused }

// welcomeTimeout bounds the wait for the controller's answer to a hello.
const welcomeTimeout = 30 * time.Second

// Run is the node daemon: it checks the secret file, takes the node's state
// directory lock and inventory, re-adopts the node's containers, then
// connects to the controller and serves it, reconnecting with backoff
// whenever the connection ends, until ctx is done. Containers keep running
// when Run returns. Run returns nil when ctx ends, and an error for what
// retrying cannot mend: a bad configuration or secret file, a state
// directory in use, a secret the controller refuses (ErrBadSecret), a
// certificate it refuses (ErrBadCert).
func Run(ctx context.Context, o Options) error {
	if o.Config == nil || o.Runtime == nil {
		return errors.New("noded: Options need a Config and a Runtime")
	}
	nodeCfg := o.Config.Node(o.Node)
	if nodeCfg == nil {
		return fmt.Errorf("%w: %q in %s", ErrUnknownNode, o.Node, o.Config.File)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("node", o.Node)
	secret, err := secret.Read(o.Config.Cluster.SecretFile)
	if err != nil {
		return fmt.Errorf("node %s: %w", o.Node, err)
	}
	dial := o.Dial
	var redirect func(addr string) bool
	if dial == nil {
		r, err := newRotation(&o.Config.Cluster)
		if err != nil {
			return fmt.Errorf("node %s: %w", o.Node, err)
		}
		dial, redirect = r.Dial, r.prefer
		if !o.Config.Cluster.TLS() {
			log.Warn("no TLS configured: the secret and the orders cross the network in clear")
		}
	}
	dir := o.StateDir
	if dir == "" {
		dir = DefaultStateDir(o.Node)
	}
	st := store{dir: dir}
	unlock, err := st.lock()
	if err != nil {
		return fmt.Errorf("node %s: %w", o.Node, err)
	}
	defer unlock()
	ep, err := loadEpochs(dir)
	if err != nil {
		return fmt.Errorf("node %s: %w", o.Node, err)
	}

	discover := o.Discover
	if discover == nil {
		discover = gpu.Discover
	}
	inv := TakeInventory(ctx, nodeCfg, discover)
	for _, p := range inv.Problems {
		log.Warn("the node disagrees with its configuration", "problem", p)
	}
	mounts := o.Config.JobMounts(nodeCfg.Partition)
	inv.Missing = checkMounts(mounts)
	inv.Checkpoint = checkpointFS(o.Config.CheckpointRoot(nodeCfg))
	if e := inv.Checkpoint.Error; e != "" {
		inv.Problems = append(inv.Problems, e)
	}
	for _, m := range inv.Missing {
		log.Error("a configured mount is missing: the node runs no job until it is there and sharqd restarts", "problem", m)
	}
	log.Info("inventory", "gpus", len(inv.GPUs), "source", inv.Source, "cpus", inv.CPUs, "mem_bytes", inv.MemBytes, "mounts", len(mounts))
	hostImg := false
	if p := o.Config.Partition(nodeCfg.Partition); p != nil {
		hostImg = p.HostImage
	}

	var part conf.Partition // zero for a node no partition names: no limits
	if p := o.Config.Partition(nodeCfg.Partition); p != nil {
		part = *p
	}
	clients, missing := newJobClients(o.Config)
	if len(missing) > 0 {
		log.Warn("jobs on this node cannot use the client commands fully: missing on the node", "paths", missing)
	}
	if len(clients.Servers) == 0 {
		log.Warn("no client_listen (or servers) in [cluster]: jobs cannot reach the controller to submit jobs")
	}
	sctx, cancel := context.WithCancel(ctx)
	sup := &supervisor{
		ctx: sctx, node: o.Node, rt: o.Runtime, store: st,
		gpus: inv.GPUs, extra: nodeCfg.ExtraDevices, ckptRoot: o.Config.CheckpointRoot(nodeCfg), part: part,
		mounts: mounts, hostImg: hostImg, health: newHealth(), selfTest: newSelfTest(), gpuHealth: gpu.NewHealth(), check: &healthCheck{},
		clients: clients, log: log, out: newOutbox(), serial: newSerial(), starting: newStarting(), jobs: map[string]*job{},
		lease: newLease(bootTime), use: &gpuUse{runs: map[string]*runUse{}},
	}
	defer sup.shutdown()
	defer cancel()
	sessionAddr := startSessions(sctx, o, sup, log)

	heartbeat := o.Config.Cluster.HeartbeatInterval
	if heartbeat <= 0 {
		heartbeat = conf.DefaultHeartbeatInterval
	}
	// Without its containers re-adopted the node still connects, saying
	// it is unhealthy (if the runtime is why); watchHealth re-adopts them
	// once it can (health.go).
	adopted := true
	if err := sup.adopt(); err != nil {
		adopted = false
		log.Error("cannot re-adopt the node's containers yet; retrying while connected", "err", err)
		sup.probe(ctx)
	}
	sup.adopted.Store(adopted)
	// The lease the node still holds: it does not begin anew with the
	// daemon (its containers did not).
	rec, err := loadLease(dir)
	if err != nil {
		log.Error("cannot read the job lease; taking it as lost", "err", err)
	}
	running := !adopted || len(sup.runningJobs()) > 0
	sup.lease.restore(rec, running, o.Config.Cluster.JobLease)
	if st := sup.lease.state(); st.held {
		log.Info("job lease", "fence_in", st.fence-st.now, "ends_in", st.end-st.now, "from_file", rec != nil)
	}
	sup.wg.Add(1)
	go func() {
		defer sup.wg.Done()
		sup.guardLease(sctx)
	}()
	sup.wg.Add(1)
	go func() {
		defer sup.wg.Done()
		sup.watchHealth(sctx, heartbeat, adopted)
	}()
	sup.wg.Add(1)
	go func() {
		defer sup.wg.Done()
		sup.watchRuntime(sctx, heartbeat)
	}()
	sup.startNodeChecks(ctx, sctx, o, inv.Source)

	maxBackoff := o.MaxBackoff
	if len(o.Config.Cluster.Controllers) > 1 && (maxBackoff <= 0 || maxBackoff > haMaxBackoff) {
		// Several controllers: one of them takes over within seconds, and
		// the node must find it well within node_timeout.
		maxBackoff = haMaxBackoff
	}
	bo := newBackoff(o.Node, o.MinBackoff, maxBackoff)
	c := &conn{
		node: o.Node, secret: secret, inv: inv, dial: dial, heartbeat: heartbeat,
		sup: sup, epochs: ep, ha: len(o.Config.Cluster.Controllers) > 1, log: log, sessionAddr: sessionAddr,
	}
	redirects := 0
	for {
		welcomed, err := c.session(ctx)
		if ctx.Err() != nil {
			log.Info("shutting down; the job containers keep running")
			return nil
		}
		var nl *notLeaderError
		if errors.As(err, &nl) && nl.leader != "" && redirect != nil && redirects < maxRedirects {
			// A follower named the leader: go there now, not after a backoff.
			if redirect(nl.leader) {
				redirects++
				log.Info("the controller follows; dialing the leader it names", "follower", nl.from, "leader", nl.leader)
				continue
			}
			log.Warn("a follower named a leader that is not in [cluster] controllers", "follower", nl.from, "leader", nl.leader)
		}
		redirects = 0
		if errors.Is(err, ErrBadSecret) {
			log.Error("the controller refused this node's secret", "err", err)
			return fmt.Errorf("node %s: %w", o.Node, err)
		}
		if errors.Is(err, ErrBadCert) {
			log.Error("the controller refused this node's TLS certificate: it must name the node (a DNS or IP subject alternative name equal to --node)", "tls_cert", o.Config.Cluster.TLSCert, "err", err)
			return fmt.Errorf("node %s: %w", o.Node, err)
		}
		if errors.Is(err, errHelloAgain) {
			log.Info("the container runtime is back: saying hello again")
			continue
		}
		if welcomed {
			bo.reset()
		}
		d := bo.next()
		log.Warn("no connection to the controller; retrying", "err", err, "in", d)
		if !sleep(ctx, d) {
			log.Info("shutting down; the job containers keep running")
			return nil
		}
	}
}

// sleep waits d, or less if ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// runningJobs converts the runtime's containers for a hello.
func runningJobs(tasks []runtime.Task, why func(id string, run int) (string, api.StopReason)) []api.RunningJob {
	out := make([]api.RunningJob, 0, len(tasks))
	for _, t := range withoutSelfTest(tasks) {
		r := api.RunningJob{JobID: t.JobID, Run: t.Run, Exited: !t.Running, ExitStatus: t.ExitStatus}
		if r.Exited && why != nil {
			r.Error, r.Stop = why(t.JobID, t.Run)
		}
		out = append(out, r)
	}
	return out
}

// startSessions opens the node's session port (session_listen) when the
// runtime can run processes in containers, and returns its address ("" =
// no sessions: interactive jobs and qexec are refused for this node, with
// the reason in the log). It closes when ctx ends.
func startSessions(ctx context.Context, o Options, sup *supervisor, log *slog.Logger) string {
	cl := &o.Config.Cluster
	ex, ok := o.Runtime.(runtime.Execer)
	if cl.SessionListen == "" || !ok {
		return ""
	}
	var tc *tls.Config
	if cl.ClientTLS {
		cert, err := secret.KeyPair(cl.TLSCert, cl.TLSKey)
		if err != nil {
			log.Error("no sessions on this node: its TLS certificate", "err", err)
			return ""
		}
		tc = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	} else {
		log.Warn("sessions travel in clear (client_tls is off)")
	}
	l, err := listenSessions(cl.SessionListen, tc)
	if err != nil {
		log.Error("no sessions on this node (interactive jobs and qexec are refused here)", "err", err)
		return ""
	}
	sup.sessions = newSessions(sup, ex, cl.MungeSocket, log.With("part", "sessions"))
	context.AfterFunc(ctx, func() { l.Close() })
	sup.wg.Add(1)
	go func() {
		defer sup.wg.Done()
		sup.sessions.serve(ctx, l)
	}()
	log.Info("serving sessions", "addr", l.Addr().String(), "tls", tc != nil)
	return l.Addr().String()
}
