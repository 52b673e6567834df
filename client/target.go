package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// DefaultConfig is the cluster configuration every host of a cluster has.
const DefaultConfig = "/etc/sharq/cluster.toml"

// Target is where and how a command reaches the controller: its Unix
// socket (on the controller host) or its TCP client port (from any other
// host, with a MUNGE credential).
type Target struct {
	Socket  string   // Unix socket; used when Servers is empty
	Servers []string // TCP host:port of the controller, tried in order
	// TLS, when set, wraps the TCP connection (client_tls); ServerName is
	// filled in per server.
	TLS         *tls.Config
	MungeSocket string // the local munged ("" = munge.DefaultSocket)
	// Timeout bounds how long a TCP call keeps looking for a leader that
	// answers (callTCP): rounds over Servers, with backoff, through a
	// failover. A server is waited on for a third of it (every request
	// but OpWait, which waits for a job's end): a paused or cut-off
	// controller is left for the next. 0 = DefaultTimeout;
	// SHARQ_SERVER_TIMEOUT sets it (Locate), at most MaxTimeout.
	Timeout time.Duration
	// From says what chose this target, for error messages:
	// "SHARQ_SERVER", "SHARQ_SOCKET", a configuration file, or "default".
	From string
}

// Transport names the transport and address, for messages: "unix socket
// /run/sharq/sharq.sock" or "TCP ctl01:6818 (TLS)".
func (t Target) Transport() string {
	if len(t.Servers) == 0 {
		return "unix socket " + t.Socket
	}
	s := "TCP " + strings.Join(t.Servers, ",")
	if t.TLS != nil {
		s += " (TLS)"
	}
	return s
}

// hint says how the target was chosen and how to choose another.
func (t Target) hint() string {
	if t.From == "" {
		t.From = "default"
	}
	return "chosen by " + t.From + "; SHARQ_SERVER=host:port selects TCP, SHARQ_SOCKET=path a Unix socket"
}

// Call sends req to the controller and returns its answer, as the package
// function Call does, over t's transport.
func (t Target) Call(ctx context.Context, req api.Request) (*api.Response, error) {
	if len(t.Servers) > 0 {
		return t.callTCP(ctx, req)
	}
	return t.callUnix(ctx, req)
}

// Locate chooses how to reach the controller, from the environment
// (getenv) and the cluster configuration:
//  1. SHARQ_SERVER=host:port[,host:port...]: TCP (MUNGE) to those;
//  2. SHARQ_SOCKET=path: that Unix socket;
//  3. the configuration ($SHARQ_CONF, else /etc/sharq/cluster.toml): its
//     socket when it exists on this host (the controller host), else its
//     servers (TCP);
//  4. without a configuration file: DefaultSocket.
//
// Only the configuration's [cluster] table is read and checked
// (conf.LoadCluster): a client needs nothing else, and checking the
// partitions, nodes and shares on every qsub is the controller's job.
//
// SHARQ_MUNGE_SOCKET overrides the configuration's munge_socket and
// SHARQ_TLS_CA its tls_ca (with TLS on).
func Locate(getenv func(string) string) (Target, error) {
	var cfg *conf.Cluster // only [cluster]: conf.LoadCluster skips the rest
	path := getenv("SHARQ_CONF")
	if path == "" {
		path = DefaultConfig
	}
	load := func() error {
		c, err := conf.LoadCluster(path)
		if err != nil {
			return err
		}
		cfg = &c
		return nil
	}
	t := Target{MungeSocket: getenv("SHARQ_MUNGE_SOCKET")}
	if v := getenv("SHARQ_SERVER_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > MaxTimeout {
			return t, fmt.Errorf("%w: SHARQ_SERVER_TIMEOUT=%q: want a positive duration up to %v such as 30s", ErrConfig, v, MaxTimeout)
		}
		t.Timeout = d
	}
	switch servers := getenv("SHARQ_SERVER"); {
	case servers != "":
		t.From = "SHARQ_SERVER"
		for _, s := range strings.Split(servers, ",") {
			if s = strings.TrimSpace(s); s != "" {
				t.Servers = append(t.Servers, s)
			}
		}
		if err := load(); err != nil && !errors.Is(err, os.ErrNotExist) {
			return t, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	case getenv("SHARQ_SOCKET") != "":
		t.From, t.Socket = "SHARQ_SOCKET", getenv("SHARQ_SOCKET")
		return t, nil
	default:
		if err := load(); err != nil {
			if errors.Is(err, os.ErrNotExist) && getenv("SHARQ_CONF") == "" {
				t.From, t.Socket = "default; no "+DefaultConfig, DefaultSocket
				return t, nil
			}
			return t, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		t.From, t.Socket = path, cfg.Socket
		if _, err := os.Stat(cfg.Socket); err == nil || len(cfg.Servers) == 0 {
			return t, nil
		}
		t.Socket, t.Servers = "", cfg.Servers
	}
	caFile := getenv("SHARQ_TLS_CA")
	if cfg != nil {
		if t.MungeSocket == "" {
			t.MungeSocket = cfg.MungeSocket
		}
		if caFile == "" && cfg.ClientTLS {
			caFile = cfg.TLSCA
		}
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return t, fmt.Errorf("%w: client TLS CA: %w", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return t, fmt.Errorf("%w: client TLS CA %s: no certificate found", ErrConfig, caFile)
		}
		t.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}
	}
	return t, nil
}

// Auto returns the function the commands' mains hand to package cli: it
// locates the controller (Locate with the process environment) at the
// first request and sends every request there.
func Auto() func(context.Context, api.Request) (*api.Response, error) {
	var (
		once sync.Once
		t    Target
		err  error
	)
	return func(ctx context.Context, req api.Request) (*api.Response, error) {
		once.Do(func() { t, err = Locate(os.Getenv) })
		if err != nil {
			return nil, err
		}
		return t.Call(ctx, req)
	}
}
