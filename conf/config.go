package conf

import (
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/policy"
)

// Config is a loaded and validated cluster configuration. Every optional
// key holds its default.
type Config struct {
	File       string // path it was loaded from
	Cluster    Cluster
	Etcd       Etcd // used when Cluster.Spool is SpoolEtcd
	Accounting Accounting
	Scheduler  Scheduler
	Runtime    Runtime
	Partitions []Partition
	Nodes      []Node // expanded: one entry per node name, in file order
	Shares     []Share
	// Topologies are the [[topology]] blocks with their [[domain]]s.
	Topologies []Topology
	// Warnings are what loads but is probably not meant (e.g. a borrow
	// limit that rounds down to no GPU), with file and line.
	Warnings Problems
}

// Cluster is the [cluster] table: the controller's own settings.
type Cluster struct {
	Name       string // in job ids: 123.lab
	SpoolDir   string
	Socket     string   // client Unix socket
	Listen     string   // host:port where node daemons connect
	Controller string   // host:port node daemons dial
	Admins     []string // user names, or "@group"
	SecretFile string   // shared secret for node daemons (checked by the daemons)
	// TLSCert, TLSKey and TLSCA are all set or all empty.
	TLSCert, TLSKey, TLSCA string

	HeartbeatInterval time.Duration
	NodeTimeout       time.Duration // a node silent this long is marked down
	History           time.Duration // how long finished jobs are kept
	Metrics           string        // host:port for Prometheus /metrics; "" = off
	CheckpointRoot    string        // per-job checkpoint directories live below it (a node may set its own)
	Mounts            []Mount       // bind-mounted into every job of every partition
	// JobLease is how long a node keeps running its jobs without its
	// lease renewed by the controller's acknowledgement of its heartbeats:
	// by then it has stopped them (SIGTERM a fence grace before, SIGKILL at
	// the end), and only then does the controller requeue the jobs of a
	// silent node. Longer than NodeTimeout.
	JobLease time.Duration
	// DefaultShare takes the jobs submitted without -q (PBS's
	// default_queue); "" refuses them.
	DefaultShare string

	// Spool is the job store: SpoolBolt (default) or SpoolEtcd.
	Spool string
	// Controllers are the node addresses (host:port) of every controller
	// of an HA cluster, in the order node daemons try them; by default
	// just Controller.
	Controllers []string

	// ClientListen is the TCP address where the controller serves client
	// commands of other hosts (MUNGE credentials); "" = none, only Socket.
	ClientListen string
	// Servers are the host:port addresses client commands on other hosts
	// dial, in order; by default the host of Controller at the port of
	// ClientListen (none without ClientListen), for each of Controllers.
	Servers []string
	// ClientTLS puts TLS (TLSCert, TLSKey; clients check it against
	// TLSCA) on ClientListen.
	ClientTLS bool
	// MungeSocket is munged's socket on every host: the controller decodes
	// credentials with it, clients encode with it, sharqd gives it to jobs.
	MungeSocket string
	// SessionListen is where each sharqd serves interactive sessions
	// (qsub -I, qexec): host:port, port 0 for any free port (the node
	// tells the controller which); "" = no sessions on the nodes.
	SessionListen string
	// MaxQueuedJobsPerUser is every share's max_queued_jobs_per_user
	// unless the share sets its own; 0 = no limit.
	MaxQueuedJobsPerUser int
	// MaxJobBytesPerUser caps the bytes one user's unfinished jobs make
	// the controller hold (every variable-size field, and a fixed part a
	// job); DefaultMaxJobBytesPerUser.
	MaxJobBytesPerUser int64
}

// TLS reports whether the node connection uses TLS.
func (c *Cluster) TLS() bool { return c.TLSCert != "" }

// Runtime is the [runtime] table: how node daemons reach containerd.
type Runtime struct {
	ContainerdSocket string
	Namespace        string
	// ClientBinDir holds the client commands (qsub, qstat, ...), static
	// binaries that sharqd bind-mounts read-only into every job.
	ClientBinDir string
	// HealthCheck is the node health program sharqd runs at start and
	// every HealthCheckInterval ("" = none): a non-zero exit keeps new
	// jobs off the node, with its first output line as the reason, until
	// a run succeeds (daemon/noded/healthcheck.go).
	HealthCheck         string
	HealthCheckInterval time.Duration
	// GPUSampleInterval is how often sharqd samples each job's GPUs
	// through NVML (daemon/noded/gpuuse.go).
	GPUSampleInterval time.Duration
}

// Partition is a [[partition]] block.
type Partition struct {
	Name         string
	Nodes        []string // expanded, in hostlist order
	DefaultImage string   // "" = jobs must name their image
	PreemptGrace time.Duration
	// MaxPreemptGrace caps the grace a job may ask for (qsub -W grace):
	// a borrower cannot make a lender wait longer. Default
	// DefaultMaxPreemptGrace, at least PreemptGrace.
	MaxPreemptGrace time.Duration
	MaxWalltime     time.Duration // 0 = no limit
	// DefaultWalltime is the walltime of a job that asks for none: it is
	// enforced on the node and reservations count with it. Default
	// MaxWalltime (0: such jobs run without limit and never let a
	// reservation be computed across their GPUs).
	DefaultWalltime time.Duration
	// NeverFitsFailAfter fails a job the scheduler holds as never
	// fitting (RequestExceedsLimits, QuotaLimitExceeded) once it has been
	// held that long; 0 (the default) keeps it held until the
	// configuration or the job changes.
	NeverFitsFailAfter time.Duration
	PreemptionRetries  int // policy.Unlimited (-1) = no limit
	// NodeFailureRetries limits requeues after losing a node, apart from
	// preemptions; policy.Unlimited (-1, the default) = no limit.
	NodeFailureRetries int
	// StartFailureRetries limits requeues after a start that failed
	// through the job's fault (bad image, unusable directory);
	// DefaultStartFailureRetries unless set, policy.Unlimited = no limit.
	StartFailureRetries int
	// Confinement of the partition's jobs on the nodes (see SECURITY.md).
	PidsLimit           int64   // most processes and threads per job and node; 0 = no limit
	AllowUserNamespaces bool    // jobs may create user namespaces (rootless container tools)
	Network             string  // NetworkHost or NetworkNone
	Mounts              []Mount // the partition's own, added to the cluster's (see JobMounts)
	// HostImage: jobs may ask for image "host" (the node's root
	// filesystem); true when DefaultImage is "host".
	HostImage bool
	// CheckpointsLocal: the admin keeps checkpoints on each node's own
	// disk; a requeued job then prefers the node that holds its checkpoint
	// and the nodes' checkpoint roots are not expected to be shared.
	CheckpointsLocal bool
	// Interactive: the partition takes interactive jobs (qsub -I); true
	// unless interactive = false.
	Interactive bool
	// MaxInteractiveWalltime caps an interactive job's walltime and is
	// the walltime of one that names none; 0 = only MaxWalltime.
	MaxInteractiveWalltime time.Duration
	// The idle policy (daemon/ctld/idle.go; off while IdleAfter is 0): a
	// running job whose GPUs all stayed below IdleThreshold percent use
	// for IdleAfter is marked IdleGPUs, and reclaims take it first.
	// IdleThreshold 0: DefaultIdleThreshold.
	IdleThreshold float64
	IdleAfter     time.Duration
	// IdleAction (IdleActionNone, IdleActionRequeue, IdleActionStop) is
	// what the controller does to a job once it is marked IdleGPUs: only
	// to a borrowing or interactive one unless IdleActionInQuota
	// (daemon/ctld/idleaction.go).
	IdleAction        IdleAction
	IdleActionInQuota bool
	// DefaultNCPUs is the CPUs per node of a job that names no ncpus;
	// 0: its share of its node's CPUs (CPUs × its GPUs / the node's GPUs,
	// rounded up; one for a job without GPUs), set when it starts.
	DefaultNCPUs int
	// DefaultMemPerGPU and DefaultMemPerCPU (bytes; Slurm's DefMemPerGPU,
	// DefMemPerCPU) give the memory per node of a job that names no mem:
	// per GPU for a job with GPUs, else per CPU. 0: its share of its
	// node's memory, as DefaultNCPUs, set when it starts.
	DefaultMemPerGPU, DefaultMemPerCPU int64
	// Topology names the [[topology]] the partition's nodes sit in ("":
	// none); DefaultTopologyLevel is the level by which jobs that ask for
	// none are placed, preferred ("": none).
	Topology             string
	DefaultTopologyLevel string
}

// Node is one node of a [[node]] block.
type Node struct {
	Name      string
	Partition string // the partition whose nodes list names it
	GPUs      int
	CPUs      int   // 0: not accounted
	MemBytes  int64 // 0: not accounted
	// GPUDevices holds one device node per GPU: index i is GPU i.
	// ExtraDevices are control devices every GPU job gets when they exist.
	// Both slices are shared by the nodes of one [[node]] block: read-only.
	GPUDevices   []string
	ExtraDevices []string
	// CheckpointRoot is where this node keeps checkpoints: its block's
	// checkpoint_root, or the cluster's.
	CheckpointRoot string
	// Labels are site resources jobs select (-l select=1:gpu_type=a100),
	// shared by the nodes of one [[node]] block: read-only.
	Labels map[string]string
	// NVLinkGroups are the GPU indices NVLink joins, a group each ([[node]]
	// nvlink, for nodes whose NVML cannot tell; what NVML reports wins).
	NVLinkGroups [][]int
}

// Share is a [[share]] block: a team's quota in a partition.
type Share struct {
	Name              string
	Partition         string
	GPUs              int // the guaranteed quota
	Strategy          policy.Strategy
	BorrowLimit       int // percent of GPUs; policy.Unlimited (-1) = no limit
	InSharePreemption bool
	Users             []string // user names, "@group" or "*"
	Enabled           bool     // false: new jobs are refused, running ones finish
	PriorityDefault   int      // 0..9999
	// FairWeight is the share's weight among borrowers under fair share;
	// 0 (absent) means its quota.
	FairWeight int
	// FairShareUsers orders the share's jobs by their users' decayed usage.
	FairShareUsers bool
	// MaxRunningJobsPerUser and MaxGPUsPerUser cap what one user runs in
	// the share at once (array subjobs count one by one); 0 = no limit.
	MaxRunningJobsPerUser int
	MaxGPUsPerUser        int
	// MaxQueuedJobsPerUser caps one user's unfinished jobs in the share
	// (queued, held or running; an array's subjobs one by one), as PBS's
	// max_queued and Slurm's MaxSubmitJobs; 0 = the cluster's.
	MaxQueuedJobsPerUser int
}

// Defaults for optional keys.
const (
	DefaultSpoolDir          = "/var/spool/sharq"
	DefaultSocket            = "/run/sharq/sharq.sock"
	DefaultListen            = "0.0.0.0:6820"
	DefaultSecretFile        = "/etc/sharq/secret"
	DefaultHeartbeatInterval = 5 * time.Second
	DefaultNodeTimeout       = 30 * time.Second
	DefaultJobLease          = 2 * time.Minute
	MaxJobLease              = 24 * time.Hour
	DefaultHistory           = 7 * 24 * time.Hour
	DefaultCheckpointRoot    = "/var/lib/sharq/checkpoints"
	DefaultMungeSocket       = "/run/munge/munge.socket.2"
	DefaultSessionListen     = "0.0.0.0:6821"
	DefaultContainerdSocket  = "/run/containerd/containerd.sock"
	DefaultNamespace         = "sharq"
	DefaultClientBinDir      = "/usr/local/bin"
	DefaultPreemptGrace      = 30 * time.Second
	DefaultMaxPreemptGrace   = time.Hour
	// DefaultHealthCheckInterval is how often a node runs its health_check.
	DefaultHealthCheckInterval = 5 * time.Minute
	// MinHealthCheckInterval bounds health_check_interval from below.
	MinHealthCheckInterval = 10 * time.Second
	// DefaultIdleThreshold is a partition's idle_threshold, in percent.
	DefaultIdleThreshold = 5
	// DefaultGPUSampleInterval is how often a node samples its jobs' GPUs.
	DefaultGPUSampleInterval = 30 * time.Second
	// DefaultMaxJobBytesPerUser: some 30,000 small held jobs of one user.
	DefaultMaxJobBytesPerUser = 64 << 20
	// MinMaxJobBytesPerUser: below it a user's one large job would not fit.
	MinMaxJobBytesPerUser = 8 << 20
	// DefaultStartFailureRetries: a job whose start fails a third time fails.
	DefaultStartFailureRetries = 2
	DefaultPidsLimit           = 8192
	NetworkHost                = "host" // a partition's jobs share the node's network
	NetworkNone                = "none" // each job has its own empty network namespace
	DefaultPriority            = 100
	MaxPriority                = 9999
)

// DefaultAdmins is the admins list when the key is absent.
func DefaultAdmins() []string { return []string{"root"} }

// DefaultExtraDevices is a node's extra_devices when the key is absent.
func DefaultExtraDevices() []string {
	return []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}
}

// Partition returns the partition called name, or nil.
func (c *Config) Partition(name string) *Partition {
	for i := range c.Partitions {
		if c.Partitions[i].Name == name {
			return &c.Partitions[i]
		}
	}
	return nil
}

// Share returns the share called name, or nil.
func (c *Config) Share(name string) *Share {
	for i := range c.Shares {
		if c.Shares[i].Name == name {
			return &c.Shares[i]
		}
	}
	return nil
}

// Node returns the node called name, or nil.
func (c *Config) Node(name string) *Node {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	return nil
}

// CheckpointRoot is where node n keeps checkpoints: its own
// checkpoint_root, else the cluster's.
func (c *Config) CheckpointRoot(n *Node) string {
	if n != nil && n.CheckpointRoot != "" {
		return n.CheckpointRoot
	}
	return c.Cluster.CheckpointRoot
}

// JobMounts is every mount a job of the partition gets: the cluster's,
// then the partition's own, parents before the paths below them.
func (c *Config) JobMounts(partition string) []Mount {
	out := slices.Clone(c.Cluster.Mounts)
	if p := c.Partition(partition); p != nil {
		out = append(out, p.Mounts...)
	}
	slices.SortStableFunc(out, func(a, b Mount) int {
		return strings.Count(a.Path, "/") - strings.Count(b.Path, "/")
	})
	return out
}

// JobWalltime is the walltime a job of the partition runs with: its own,
// or else the partition's default_walltime (0: no limit).
func (c *Config) JobWalltime(partition string, own time.Duration) time.Duration {
	if own > 0 {
		return own
	}
	if p := c.Partition(partition); p != nil {
		return p.DefaultWalltime
	}
	return 0
}

// PartitionGPUs is the number of GPUs the partition's nodes declare.
func (c *Config) PartitionGPUs(partition string) int {
	n := 0
	for i := range c.Nodes {
		if c.Nodes[i].Partition == partition {
			n += c.Nodes[i].GPUs
		}
	}
	return n
}

// HostImage is the image name that runs jobs on the node's own root
// filesystem (runtime.HostImage).
const HostImage = "host"
