package localcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/conf"
)

// Defaults for Options.
const (
	DefaultRunDir   = "/run/sharq-local"
	DefaultStateDir = "/var/lib/sharq-local"
	DefaultUser     = "sharqdemo"
	DefaultTimeout  = 90 * time.Second
)

// ErrOutsideDirs means the configuration puts one of the cluster's files
// outside RunDir and StateDir, which are the only places Up creates and
// removes files.
var ErrOutsideDirs = errors.New("configuration path outside the local cluster's directories")

// Options configures Up.
type Options struct {
	Repo     string        // repository root; default "."
	Config   string        // cluster configuration; default Repo/contrib/examples/local.toml
	BinDir   string        // sharqctld, sharqd and the client commands; default Repo/bin
	RunDir   string        // sockets, secret, fake GPUs, lock file; default DefaultRunDir
	StateDir string        // logs, spool, containerd's root, client commands for users; default DefaultStateDir
	User     string        // unprivileged user to submit jobs as, created if missing; default DefaultUser; "-" for none
	Timeout  time.Duration // how long each start-up step may take; default DefaultTimeout
	Out      io.Writer     // progress and instructions; default os.Stdout
}

func (o *Options) setDefaults() {
	if o.Repo == "" {
		o.Repo = "."
	}
	if o.Config == "" {
		o.Config = filepath.Join(o.Repo, "contrib", "examples", "local.toml")
	}
	if o.BinDir == "" {
		o.BinDir = filepath.Join(o.Repo, "bin")
	}
	if o.RunDir == "" {
		o.RunDir = DefaultRunDir
	}
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir
	}
	if o.User == "" {
		o.User = DefaultUser
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
}

// layout is where everything of one local cluster lives.
type layout struct {
	cfg      *conf.Config
	config   string // absolute path of the configuration
	bin      string // absolute BinDir
	run      string // RunDir
	state    string // StateDir
	lock     string // RunDir/sharq-up.lock: flock held while up; holds the pids
	logDir   string // StateDir/log
	userBin  string // StateDir/bin: the client commands, reachable by every user
	ctrDir   string // StateDir/containerd: root, state, opt, config.toml
	nodeDir  string // StateDir/node: one state directory per node
	ctrSock  string // containerd's socket (from the configuration)
	devices  []string
	nodes    []string
	userName string // "" = none
}

// newLayout loads the configuration and checks that every file the cluster
// writes is under RunDir or StateDir.
func newLayout(o Options) (*layout, error) {
	abs := func(p string) (string, error) {
		a, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("local cluster: %w", err)
		}
		return filepath.Clean(a), nil
	}
	config, err := abs(o.Config)
	if err != nil {
		return nil, err
	}
	bin, err := abs(o.BinDir)
	if err != nil {
		return nil, err
	}
	run, err := abs(o.RunDir)
	if err != nil {
		return nil, err
	}
	state, err := abs(o.StateDir)
	if err != nil {
		return nil, err
	}
	if run == "/" || state == "/" {
		return nil, fmt.Errorf("local cluster: %w: the run and state directories cannot be /", ErrOutsideDirs)
	}
	cfg, err := conf.Load(config)
	if err != nil {
		return nil, err
	}
	l := &layout{
		cfg: cfg, config: config, bin: bin, run: run, state: state,
		lock:    filepath.Join(run, "sharq-up.lock"),
		logDir:  filepath.Join(state, "log"),
		userBin: filepath.Join(state, "bin"),
		ctrDir:  filepath.Join(state, "containerd"),
		nodeDir: filepath.Join(state, "node"),
		ctrSock: cfg.Runtime.ContainerdSocket,
	}
	if o.User != "-" {
		l.userName = o.User
	}
	for _, n := range cfg.Nodes {
		l.nodes = append(l.nodes, n.Name)
		for _, d := range n.GPUDevices {
			if !slices.Contains(l.devices, d) {
				l.devices = append(l.devices, d)
			}
		}
	}
	if len(l.nodes) == 0 {
		return nil, fmt.Errorf("local cluster: %s declares no node", config)
	}
	paths := []struct{ key, path string }{
		{"cluster.spool_dir", cfg.Cluster.SpoolDir},
		{"cluster.socket", cfg.Cluster.Socket},
		{"cluster.secret_file", cfg.Cluster.SecretFile},
		{"cluster.checkpoint_root", cfg.Cluster.CheckpointRoot},
		{"runtime.containerd_socket", cfg.Runtime.ContainerdSocket},
	}
	if cfg.Cluster.ClientListen != "" {
		paths = append(paths, struct{ key, path string }{"cluster.munge_socket", cfg.Cluster.MungeSocket})
	}
	for _, d := range l.devices {
		paths = append(paths, struct{ key, path string }{"node.gpu_devices", d})
	}
	for _, p := range paths {
		if !l.owns(p.path) {
			return nil, fmt.Errorf("local cluster: %w: %s = %q in %s is not under %s or %s",
				ErrOutsideDirs, p.key, p.path, config, run, state)
		}
	}
	if cfg.Cluster.TLS() {
		return nil, fmt.Errorf("local cluster: %s uses TLS; the local cluster runs on localhost without it", config)
	}
	return l, nil
}

// owns reports whether path is strictly below RunDir or StateDir.
func (l *layout) owns(path string) bool {
	p := filepath.Clean(path)
	return strings.HasPrefix(p, l.run+"/") || strings.HasPrefix(p, l.state+"/")
}

func (l *layout) log(name string) string { return filepath.Join(l.logDir, name+".log") }
