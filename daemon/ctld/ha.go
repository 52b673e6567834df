package ctld

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/internal/secret"
	"github.com/sharq-hpc/sharq/spool/etcdspool"
)

// errNotValid: the leader's lease may have expired (a pause, or etcd
// unreachable); the controller stops before doing anything more.
var errNotValid = errors.New("leader lease not confirmed within two thirds of its TTL")

// Key layout of an HA cluster under [etcd] prefix.
const (
	electionDir = "leader"
	spoolDir    = "spool/"
)

// dialEtcd connects to the [etcd] endpoints.
func dialEtcd(e conf.Etcd) (*clientv3.Client, error) {
	var tc *tls.Config
	if e.TLS() {
		if e.TLSKey != "" {
			// The key's owner and mode are checked as the cluster's are.
			if _, err := secret.KeyPair(e.TLSCert, e.TLSKey); err != nil {
				return nil, fmt.Errorf("etcd TLS: %w", err)
			}
		}
		info := transport.TLSInfo{CertFile: e.TLSCert, KeyFile: e.TLSKey, TrustedCAFile: e.TLSCA}
		var err error
		if tc, err = info.ClientConfig(); err != nil {
			return nil, fmt.Errorf("etcd TLS: %w", err)
		}
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            e.Endpoints,
		DialTimeout:          e.Timeout,
		DialKeepAliveTime:    e.SessionTTL,
		DialKeepAliveTimeout: e.Timeout,
		TLS:                  tc,
		Logger:               zap.NewNop(), // errors reach us as returned values
		MaxCallSendMsgSize:   int(e.MaxRequestBytes),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %v: %w", e.Endpoints, err)
	}
	return cli, nil
}

// campaign joins the election and blocks until this controller leads, then
// opens the fenced spool.
func (c *Controller) campaign(ctx context.Context) error {
	e := c.cfg.Etcd
	cli, err := dialEtcd(e)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	info := leader.Info{Host: host, PID: os.Getpid(), Nodes: c.cfg.Cluster.Controller,
		Clients: c.cfg.Cluster.ClientAddress(), Since: c.now()}
	c.etcd, c.electionPrefix = cli, e.Prefix+electionDir
	// While it waits, the controller answers on its ports with the
	// leader's address (follower.go).
	f, err := c.openFront()
	if err != nil {
		cli.Close()
		return err
	}
	c.log.Info("campaigning for leadership", "etcd", e.Endpoints, "prefix", e.Prefix, "ttl", e.SessionTTL)
	start := time.Now()
	ld, err := leader.Campaign(ctx, cli, c.electionPrefix, e.SessionTTL, info)
	if err != nil {
		f.close()
		cli.Close()
		return err
	}
	f.lead()
	sp, err := etcdspool.Open(ctx, cli, etcdspool.Options{
		Prefix: e.Prefix + spoolDir, Fence: ld.Fence, Timeout: e.Timeout,
		MaxTxnOps: e.MaxTxnOps, MaxRequestBytes: int(e.MaxRequestBytes),
	})
	if err != nil {
		f.close()
		ld.Resign(context.WithoutCancel(ctx))
		cli.Close()
		return err
	}
	c.lead, c.sp, c.front = ld, sp, f
	c.log.Info("leading", "epoch", ld.Epoch(), "waited", time.Since(start).Round(time.Millisecond))
	return nil
}

// stepDown ends leadership when the controller stops: a graceful stop
// resigns so that a follower takes over at once.
func (c *Controller) stepDown(graceful bool) {
	if c.front != nil {
		c.front.close()
	}
	if c.lead == nil {
		return
	}
	if graceful {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := c.lead.Resign(ctx); err != nil {
			c.log.Warn("resign", "err", err)
		}
		cancel()
	}
	c.etcd.Close()
}

// controllers answers sharqctl show controllers: the election's candidates
// from etcd, or this controller alone on bbolt. It does not run on the loop.
func (c *Controller) controllers(ctx context.Context) *api.Response {
	if c.lead == nil {
		host, _ := os.Hostname()
		return &api.Response{Controllers: []api.ControllerStatus{{Host: host, PID: os.Getpid(), Nodes: c.nodeAddr,
			Leader: true, Since: c.startedAt, LeaderSince: c.startedAt}}}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cs, err := leader.List(ctx, c.etcd, c.electionPrefix)
	if err != nil {
		return &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: err.Error()}}
	}
	out := make([]api.ControllerStatus, 0, len(cs))
	for _, cand := range cs {
		st := api.ControllerStatus{Host: cand.Info.Host, PID: cand.Info.PID, Nodes: cand.Info.Nodes,
			Leader: cand.Leader, Epoch: cand.Epoch, Since: cand.Info.Since}
		if cand.Key == c.lead.Key() {
			st.LeaderSince = c.lead.Since()
		}
		out = append(out, st)
	}
	return &api.Response{Controllers: out}
}
