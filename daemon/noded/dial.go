package noded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/secret"
)

// Dial timeouts. userTimeout bounds how long written data may stay
// unacknowledged before the kernel drops the connection, so a controller
// host that vanished is noticed within a few heartbeats, not after TCP's
// default quarter of an hour.
const (
	dialTimeout = 10 * time.Second
	userTimeout = 30 * time.Second
)

// Dialer returns the function that connects to a controller named in the
// configuration: plain TCP, or mutual TLS when the cluster table names a
// certificate, key and CA (the node presents its certificate and accepts
// only a controller certificate signed by the CA). With several controllers
// (an HA cluster) each call tries them in turn, starting after the one the
// previous call reached, so a node whose leader vanished finds the next.
func Dialer(c *conf.Cluster) (func(ctx context.Context) (net.Conn, error), error) {
	r, err := newRotation(c)
	if err != nil {
		return nil, err
	}
	return r.Dial, nil
}

// newRotation is Dialer's rotation over the configured controllers.
func newRotation(c *conf.Cluster) (*rotation, error) {
	addrs := c.Controllers
	if len(addrs) == 0 && c.Controller != "" {
		addrs = []string{c.Controller}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("no controller address in the configuration")
	}
	nd := &net.Dialer{
		Timeout: dialTimeout,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3,
		},
		Control: func(network, address string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(userTimeout/time.Millisecond))
			})
			if err != nil {
				return err
			}
			return serr
		},
	}
	dial := nd.DialContext
	if c.TLS() {
		tc, err := clientTLS(c)
		if err != nil {
			return nil, err
		}
		dial = (&tls.Dialer{NetDialer: nd, Config: tc}).DialContext
	}
	return &rotation{addrs: addrs, dial: dial}, nil
}

// rotation dials the controllers in turn: each Dial starts after the
// address the previous one reached, and returns the first connection or
// every error; prefer lets a follower's answer choose the address the next
// Dial tries first.
type rotation struct {
	addrs []string
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	mu    sync.Mutex
	next  int
}

// Dial tries the addresses once each, starting at the next one.
func (r *rotation) Dial(ctx context.Context) (net.Conn, error) {
	r.mu.Lock()
	start := r.next
	r.mu.Unlock()
	var errs []error
	for i := range r.addrs {
		k := (start + i) % len(r.addrs)
		conn, err := r.dial(ctx, "tcp", r.addrs[k])
		if err == nil {
			r.mu.Lock()
			r.next = (k + 1) % len(r.addrs)
			r.mu.Unlock()
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// prefer makes addr the first one the next Dial tries, if it is one of
// the configured controllers (a node dials nothing else: an answer on an
// unauthenticated connection cannot send it elsewhere). It reports whether
// addr is configured.
func (r *rotation) prefer(addr string) bool {
	k := slices.Index(r.addrs, addr)
	if k < 0 {
		return false
	}
	r.mu.Lock()
	r.next = k
	r.mu.Unlock()
	return true
}

// clientTLS loads the node's certificate and the cluster CA. The server
// name checked is the host of the address dialled (see Dialer).
func clientTLS(c *conf.Cluster) (*tls.Config, error) {
	cert, err := secret.KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("tls: node certificate: %w", err)
	}
	pem, err := os.ReadFile(c.TLSCA)
	if err != nil {
		return nil, fmt.Errorf("tls: CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls: CA %s: no PEM certificate in it", c.TLSCA)
	}
	// No ServerName: tls.Dialer takes it from the host of the address
	// each dial names, so every controller of an HA cluster (and a leader
	// a follower names) is verified by its own name, not the first one's.
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS13,
	}, nil
}
