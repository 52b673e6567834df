package ctld

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/internal/conns"
)

// The servers: the Unix client socket (clients.go), the node port
// (nodeserver.go), the MUNGE TCP client port (remote.go) and metrics
// (metrics.go), each connection on a goroutine of its own. They reach the
// loop only through do and post, and read the configuration only through
// c.snap (or the atomics set with it), never c.cfg, which a reload
// replaces on the loop.

// listeners are Run's bound ports; nil when not served (nodes and remote
// under HA, where the front holds them: follower.go).
type listeners struct {
	nodes, remote, metrics, unix net.Listener
}

// listen binds every port Run serves. Every TCP port is bound before the
// Unix socket appears: whoever waits for the socket (make up, the tests,
// systemd's readiness) finds the node, client and metrics ports accepting
// too.
func (c *Controller) listen() (_ *listeners, err error) {
	ls := &listeners{}
	defer func() {
		if err != nil {
			ls.close()
		}
	}()
	cl := c.cfg.Cluster
	if c.front == nil {
		if ls.nodes, err = c.listenNodes(); err != nil {
			return nil, err
		}
		if cl.ClientListen != "" {
			if ls.remote, err = c.listenClientsTCP(); err != nil {
				return nil, err
			}
		}
	}
	if cl.Metrics != "" {
		if ls.metrics, err = net.Listen("tcp", cl.Metrics); err != nil {
			return nil, fmt.Errorf("metrics listen %s: %w", cl.Metrics, err)
		}
	}
	if ls.unix, err = listenUnix(cl.Socket); err != nil {
		return nil, err
	}
	return ls, nil
}

// close closes the listeners that are open.
func (ls *listeners) close() {
	for _, l := range []net.Listener{ls.unix, ls.metrics, ls.remote, ls.nodes} {
		if l != nil {
			l.Close()
		}
	}
}

// servers are Run's serving goroutines and the connection goroutines they
// started.
type servers struct {
	// failed holds the first error of a listener that failed: it stops the
	// controller (systemd restarts it); listeners that end because ctx did
	// report nil.
	failed   chan error
	run      sync.WaitGroup
	handlers sync.WaitGroup
}

// serve serves ls until ctx ends; a listener that fails cancels ctx.
// graceful is Run's own context (a lost etcd session while it lives is a
// failure).
func (c *Controller) serve(ctx context.Context, cancel context.CancelFunc, graceful context.Context, ls *listeners) *servers {
	srv := &servers{failed: make(chan error, 1)}
	nodesAddr := c.cfg.Cluster.Listen
	if ls.nodes != nil {
		nodesAddr = ls.nodes.Addr().String()
	}
	c.log.Info("sharqctld serving", "cluster", c.cfg.Cluster.Name, "socket", c.cfg.Cluster.Socket,
		"nodes", nodesAddr, "jobs", len(c.jobs))
	listen := func(run func() error) {
		srv.run.Go(func() {
			if err := run(); err != nil {
				select {
				case srv.failed <- err:
				default:
				}
				cancel()
			}
		})
	}
	listen(func() error {
		return conns.ServeIn(ctx, ls.unix, "client", c.log, &srv.handlers, func(conn net.Conn) { c.serveClient(ctx, conn) })
	})
	if ls.nodes != nil {
		listen(func() error {
			return conns.ServeIn(ctx, ls.nodes, "node", c.log, &srv.handlers, func(conn net.Conn) { c.serveNode(ctx, conn) })
		})
	} else {
		// HA: the ports are open since the campaign; they serve for real now.
		c.front.start(ctx)
	}
	if ls.remote != nil {
		c.log.Info("serving remote clients (MUNGE)", "address", ls.remote.Addr().String(), "tls", c.cfg.Cluster.ClientTLS,
			"munge_socket", c.cfg.Cluster.MungeSocket)
		listen(func() error {
			return conns.ServeIn(ctx, ls.remote, "remote client", c.log, &srv.handlers, func(conn net.Conn) { c.serveRemoteClient(ctx, conn) })
		})
	}
	if ls.metrics != nil {
		listen(func() error { return c.met.serve(ctx, ls.metrics) })
	}
	if c.lead != nil {
		// A lost session stops the controller at once (systemd starts it
		// again, as a candidate).
		listen(func() error {
			select {
			case <-c.lead.Done():
				if graceful.Err() == nil {
					return leader.ErrLost
				}
			case <-ctx.Done():
			}
			return nil
		})
	}
	return srv
}

// join ends the servers (cancel: the handlers see ctx end and return) and
// waits for them, then for every connection they started.
func (srv *servers) join(cancel context.CancelFunc) {
	cancel()
	srv.run.Wait() // then no handler starts any more
	srv.handlers.Wait()
}
