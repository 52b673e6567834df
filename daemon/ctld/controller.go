package ctld

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/sharq-hpc/sharq/acct"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/daemon/schedconf"
	"github.com/sharq-hpc/sharq/internal/lograte"
	"github.com/sharq-hpc/sharq/internal/secret"
	"github.com/sharq-hpc/sharq/spool"
)

// Options configure a Controller.
type Options struct {
	// ConfigPath is the TOML file; Reload reads it again.
	ConfigPath string
	Logger     *slog.Logger
	// Spool overrides the bbolt spool under cluster.spool_dir (tests).
	Spool spool.Spool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Limits bound the connections a peer may hold (defaults when zero).
	Limits Limits
	// History overrides the job history store of [accounting] (tests).
	History acct.Store
}

// Controller is sharqctld. Create it with New, then Run it.
type Controller struct {
	opts Options
	log  *slog.Logger
	now  func() time.Time
	cfg  *conf.Config
	// snap is cfg for the goroutines that are not the loop (the servers'
	// connections): a reload replaces cfg on the loop, and stores the new
	// one here; a reader gets one whole configuration, old or new, and
	// must not change it.
	snap atomic.Pointer[conf.Config]
	// cfgText is the configuration file as it was loaded (sharqctl show config).
	cfgText string
	auth    authConfig
	secret  []byte
	// nodeTimeoutNs and heartbeatNs are cfg.Cluster.NodeTimeout and
	// HeartbeatInterval for the node connections' goroutines, which must
	// not read cfg: a reload replaces it on the loop.
	nodeTimeoutNs atomic.Int64
	heartbeatNs   atomic.Int64
	sp            spool.Spool
	// lead and etcd are set with the etcd spool: this controller won the
	// election, and every spool write is fenced with lead.
	lead *leader.Leader
	etcd *clientv3.Client
	// front serves the node and client ports from before the campaign
	// (HA only; nil otherwise).
	front *front
	// electionPrefix and nodeAddr are fixed at New (show controllers reads
	// them off the loop).
	electionPrefix string
	nodeAddr       string
	core           *sched.Scheduler
	met            *metrics
	limits         *connLimits

	// jobLeaseNs is cfg.Cluster.JobLease, granted in every answer to a
	// node (lease.go); leaseFloor (loop) is until when a node may still
	// hold a longer lease granted before a reload shortened it.
	jobLeaseNs atomic.Int64
	leaseFloor time.Time
	// leaseKept is the lease recorded in the spool (lease.go).
	leaseKept time.Duration

	ops chan *op

	// Everything below is owned by the loop goroutine.
	jobs      map[string]*job
	nodes     map[string]*node
	nextSeq   uint64 // next job number to hand out
	seqLimit  uint64 // nextSeq: reserve one in the spool first (allocSeq); MaxUint64 once done
	dirty     map[string]bool
	outbox    []outMsg
	release   []*op
	waiters   map[string][]func(*job)
	needPass  bool
	startedAt time.Time
	lastPurge time.Time
	preempted map[string]int           // per share, since start
	userBytes map[uint32]int64         // per uid: script and environment bytes of unfinished jobs
	userJobs  map[userShare]int        // per uid and share: unfinished jobs (queuedlimit.go)
	grants    map[grantKey][]time.Time // session tokens not yet expired, per uid and node (session.go)
	// requestIDs are the recent submissions' request ids (requestids.go).
	requestIDs *requestIDs
	// hist writes the job history on its own goroutine (nil: off).
	hist       *history
	lastSample time.Time
	// lastUsageSave is when the fair share usage was last written (fairusage.go).
	lastUsageSave time.Time
	// lastJobMetrics and pendingSeen belong to updateJobMetrics.
	lastJobMetrics time.Time
	pendingSeen    map[[2]string]bool
}

// ErrConfig wraps configuration problems (the conf.Problems are inside).
var ErrConfig = errors.New("configuration error")

// New loads the configuration, opens the spool and restores every job from
// it. It does not listen yet.
func New(ctx context.Context, opts Options) (*Controller, error) {
	cfg, err := conf.Load(opts.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Controller{
		opts:        opts,
		log:         opts.Logger,
		now:         opts.Now,
		ops:         make(chan *op, 4096),
		jobs:        map[string]*job{},
		requestIDs:  newRequestIDs(),
		nodes:       map[string]*node{},
		dirty:       map[string]bool{},
		waiters:     map[string][]func(*job){},
		preempted:   map[string]int{},
		pendingSeen: map[[2]string]bool{},
		userBytes:   map[uint32]int64{},
		userJobs:    map[userShare]int{},
		met:         newMetrics(),
		limits:      newConnLimits(opts.Limits.forNodes(len(cfg.Nodes))),
	}
	c.limits.logs = lograte.New(lograte.DefaultBurst, lograte.DefaultWindow, c.now)
	c.installConfig(cfg)
	c.core, err = sched.New(schedconf.Config(cfg))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.Cluster.SecretFile != "" {
		sec, err := secret.Read(cfg.Cluster.SecretFile)
		if err != nil {
			return nil, err
		}
		c.secret = []byte(sec)
	}
	c.nodeAddr = cfg.Cluster.Controller
	c.sp = opts.Spool
	if c.sp == nil && cfg.Cluster.Spool == conf.SpoolEtcd {
		if err := c.campaign(ctx); err != nil {
			return nil, err
		}
	}
	if c.sp == nil {
		b, err := spool.Open(cfg.Cluster.SpoolDir, spool.Options{})
		if err != nil {
			return nil, fmt.Errorf("open spool %s: %w", cfg.Cluster.SpoolDir, err)
		}
		c.sp = b
	}
	c.startedAt = c.now()
	c.lastPurge = c.startedAt
	c.lastSample = c.startedAt
	c.lastUsageSave = c.startedAt
	c.hist = c.newHistory(cfg.Accounting, opts.History)
	if err := c.restore(ctx); err != nil {
		c.sp.Close()
		c.stepDown(true)
		return nil, err
	}
	return c, nil
}

// installConfig compiles the parts of cfg the controller checks on every
// request (users, admins).
func (c *Controller) installConfig(cfg *conf.Config) {
	a, warnings := compileAuth(cfg)
	for _, w := range warnings {
		c.log.Warn("config", "file", cfg.File, "warning", w)
	}
	for _, w := range cfg.Warnings {
		c.log.Warn("config", "warning", w.Error())
	}
	c.cfg, c.auth = cfg, a
	c.snap.Store(cfg)
	c.nodeTimeoutNs.Store(int64(cfg.Cluster.NodeTimeout))
	c.heartbeatNs.Store(int64(cfg.Cluster.HeartbeatInterval))
	c.setJobLease(cfg.Cluster.JobLease)
	if b, err := os.ReadFile(cfg.File); err == nil {
		c.cfgText = string(b)
	}
}

// Run serves clients on the Unix socket, node daemons on the TCP address
// and metrics (when configured) until ctx ends (servers.go), running the
// loop on this goroutine. It closes the spool on return, once every
// connection goroutine has returned.
func (c *Controller) Run(ctx context.Context) error {
	defer c.sp.Close()
	graceful := ctx
	defer func() { c.stepDown(graceful.Err() != nil) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.hist != nil {
		done := make(chan struct{})
		go func() { defer close(done); c.hist.run(ctx) }()
		defer func() { cancel(); <-done }() // the store is closed when Run returns
	}

	ls, err := c.listen()
	if err != nil {
		return err
	}
	defer ls.close()
	srv := c.serve(ctx, cancel, graceful, ls)
	// Joined before the deferred closes above: no connection is still
	// using the spool or the history store when they close.
	defer srv.join(cancel)
	if err := c.loop(ctx); err != nil {
		return err
	}
	if err := c.saveUsage(); err != nil {
		c.log.Error("save fair share usage at shutdown", "err", err)
	}
	select {
	case err := <-srv.failed:
		return fmt.Errorf("listener failed: %w", err)
	default:
		return nil
	}
}
