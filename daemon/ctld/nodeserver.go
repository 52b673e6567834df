package ctld

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/secret"
)

// The node port's server: each node daemon's connection, its hello and
// its messages, on a goroutine of its own that reaches the loop through
// do and post (nodes.go is the loop's side).

// listenNodes opens the node daemons' TCP address, with mutual TLS when the
// configuration gives certificates.
func (c *Controller) listenNodes() (net.Listener, error) {
	cl := c.cfg.Cluster
	l, err := net.Listen("tcp", cl.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen for nodes on %s: %w", cl.Listen, err)
	}
	if cl.TLSCert == "" {
		return l, nil
	}
	cert, err := secret.KeyPair(cl.TLSCert, cl.TLSKey)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("node TLS: %w", err)
	}
	caPEM, err := os.ReadFile(cl.TLSCA)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("node TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		l.Close()
		return nil, fmt.Errorf("node TLS CA %s: no certificate found", cl.TLSCA)
	}
	return tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}), nil
}

// ErrNodeRefused is why a node connection was closed at hello.
var ErrNodeRefused = errors.New("node refused")

// refusal is a refused hello: the code the node acts on and the text
// people read.
type refusal struct {
	code api.RefusalCode
	msg  string
}

func (r *refusal) Error() string { return ErrNodeRefused.Error() + ": " + r.msg }

func (r *refusal) Unwrap() error { return ErrNodeRefused }

// refusalCode is the wire code of a nodeHello error.
func refusalCode(err error) api.RefusalCode {
	if r, ok := errors.AsType[*refusal](err); ok {
		return r.code
	}
	return api.RefusedOther
}

func (c *Controller) serveNode(ctx context.Context, conn net.Conn) {
	defer c.survive("node " + conn.RemoteAddr().String())
	defer conn.Close()
	// The controller stopping ends the wait for the node's hello or next
	// message, and any write to it (Run joins this goroutine before it
	// closes the spool).
	defer context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })()
	// Until its hello a connection is nobody's: it holds one of a few
	// slots of the node port's own, briefly, and a newer connection takes
	// it if it stays silent; a node that says hello at once gets in
	// however many silent connections others hold (limits.go).
	slot, err := c.limits.admit(c.limits.hello, conn, c.log, "node connection")
	if err != nil {
		c.limits.logs.Warn(c.log, "node connection refused", "remote", conn.RemoteAddr(), "err", err)
		return
	}
	dec := api.NewDecoder(conn)
	conn.SetReadDeadline(time.Now().Add(c.limits.HelloTimeout))
	if ctx.Err() != nil { // after the deadline: it may have replaced the AfterFunc's
		slot.Release()
		return
	}
	var hello api.NodeMsg
	err = dec.Decode(&hello)
	slot.Release()
	if err != nil || hello.Type != api.MsgHello {
		c.limits.logs.Warn(c.log, "node connection without hello", "remote", conn.RemoteAddr(), "err", err)
		return
	}
	nc := newNodeConn(hello.Node, conn, c.epoch(), c.heartbeat(), &c.jobLeaseNs)
	defer nc.close()
	nc.cert, nc.isTLS = peerCert(conn) // the handshake is done: the hello came through it
	var refused error
	if err := c.do(ctx, func() { refused = c.nodeHello(nc, &hello) }); err != nil {
		return
	}
	if refused != nil {
		attrs := []any{"node", hello.Node, "remote", conn.RemoteAddr()}
		if nc.cert != nil {
			attrs = append(attrs, "cert", certNames(nc.cert))
		}
		c.log.Warn("node refused", append(attrs, "err", refused)...)
		api.Encode(conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgWelcome, Error: refused.Error(), Code: refusalCode(refused)})
		return
	}
	// ctx, not a context of its own: once ctx ends the loop is ending
	// too, and a post that waited for it would hold up Run's join.
	defer c.post(ctx, func() { c.nodeGone(nc) })
	for {
		// Real time: a socket deadline. It only bounds a stalled read;
		// whether the node is lost is checkNodes' decision, on the
		// controller's clock (nodeReadBound).
		conn.SetReadDeadline(time.Now().Add(nodeReadBound(c.nodeTimeout())))
		if ctx.Err() != nil { // after the deadline: it may have replaced the AfterFunc's
			return
		}
		var m api.NodeMsg
		if err := dec.Decode(&m); err != nil {
			if ctx.Err() == nil {
				c.log.Info("node disconnected", "node", nc.name, "err", err)
			}
			return
		}
		c.post(ctx, func() { c.nodeMessage(nc, &m) })
	}
}

// epoch is the leader epoch sent to nodes: the election revision on etcd,
// 0 for a single controller.
func (c *Controller) epoch() int64 {
	if c.lead == nil {
		return 0
	}
	return c.lead.Epoch()
}

func (c *Controller) heartbeat() time.Duration {
	if h := time.Duration(c.heartbeatNs.Load()); h > 0 {
		return h
	}
	return conf.DefaultHeartbeatInterval
}

// nodeTimeout is how long a node connection may stay silent. Node
// connection goroutines call it, so it reads no loop-owned state.
func (c *Controller) nodeTimeout() time.Duration {
	if t := time.Duration(c.nodeTimeoutNs.Load()); t > 0 {
		return t
	}
	return 30 * time.Second
}

// nodeReadBound is how long a read on a node connection may block: twice
// node_timeout and a minute more, so that it never fires before
// checkNodes, which decides on the controller's clock (Options.Now) that a
// silent node is lost, marks it down and closes its connection. It is the
// backstop for a connection nothing else ends: a peer that stalls while
// the loop's clock does not move, or one the loop no longer watches.
func nodeReadBound(timeout time.Duration) time.Duration { return 2*timeout + time.Minute }
