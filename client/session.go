package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/munge"
	"github.com/sharq-hpc/sharq/session"
)

// ErrSession wraps every failure to connect to a node's session port.
var ErrSession = errors.New("cannot open the session")

// DialSession connects to the node's session port that g names (with TLS
// when the node serves it so, checked against the cluster's CA) and
// returns the connection and, when g asks for one, a MUNGE credential from
// the local munged that binds g's token to this user.
func (t Target) DialSession(ctx context.Context, g *api.SessionGrant) (net.Conn, string, error) {
	var cred string
	if g.Munge {
		c, err := munge.Encode(ctx, t.MungeSocket, session.CredentialPayload(g.Token), 0)
		if err != nil {
			return nil, "", fmt.Errorf("%w on %s: %w: %w", ErrSession, g.Node, ErrCredential, err)
		}
		cred = c
	}
	d := net.Dialer{Timeout: DialTimeout}
	if !g.TLS {
		c, err := d.DialContext(ctx, "tcp", g.Addr)
		if err != nil {
			return nil, "", fmt.Errorf("%w on %s at %s: %w", ErrSession, g.Node, g.Addr, unwrapOp(err))
		}
		return c, cred, nil
	}
	cfg := t.TLS
	if cfg == nil {
		var err error
		if cfg, err = sessionTLS(); err != nil {
			return nil, "", fmt.Errorf("%w on %s: %w", ErrSession, g.Node, err)
		}
	}
	cfg = cfg.Clone()
	host, _, err := net.SplitHostPort(g.Addr)
	if err != nil {
		return nil, "", fmt.Errorf("%w on %s: address %q: %w", ErrSession, g.Node, g.Addr, err)
	}
	cfg.ServerName = host
	c, err := (&tls.Dialer{NetDialer: &d, Config: cfg}).DialContext(ctx, "tcp", g.Addr)
	if err != nil {
		return nil, "", fmt.Errorf("%w on %s at %s (TLS): %w", ErrSession, g.Node, g.Addr, unwrapOp(err))
	}
	return c, cred, nil
}

// sessionTLS is the client TLS of a command that reached the controller
// without it (its Unix socket): the CA of SHARQ_TLS_CA or the
// configuration's tls_ca.
func sessionTLS() (*tls.Config, error) {
	ca := os.Getenv("SHARQ_TLS_CA")
	if ca == "" {
		path := os.Getenv("SHARQ_CONF")
		if path == "" {
			path = DefaultConfig
		}
		cfg, err := conf.Load(path)
		if err != nil {
			return nil, fmt.Errorf("the node serves sessions with TLS and no CA is known (SHARQ_TLS_CA): %w", err)
		}
		ca = cfg.Cluster.TLSCA
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("session TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("session TLS CA %s: no certificate found", ca)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}, nil
}

// AutoSession returns the session dialer the commands' mains hand to
// package cli: Locate with the process environment, then DialSession.
func AutoSession() func(context.Context, *api.SessionGrant) (net.Conn, string, error) {
	var (
		once sync.Once
		t    Target
		err  error
	)
	return func(ctx context.Context, g *api.SessionGrant) (net.Conn, string, error) {
		once.Do(func() { t, err = Locate(os.Getenv) })
		if err != nil {
			return nil, "", err
		}
		return t.DialSession(ctx, g)
	}
}
