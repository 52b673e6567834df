package ctld

import (
	"context"
	"net"
	"os"
	"sync"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/leader"
	"github.com/sharq-hpc/sharq/internal/conns"
)

// front holds the node and TCP client ports of an HA controller from
// before its campaign to the end of Run. While the controller follows, it
// answers every client request with CodeNotLeader and every node hello
// with a refusing welcome, both naming the current leader (from the
// election), so callers go there instead of waiting on a silent port.
// Once the controller leads, the same listeners serve for real as soon as
// Run is ready; connections that arrive during the restore wait for it.
type front struct {
	nodes, clients net.Listener
	cancel         context.CancelFunc
	wg             sync.WaitGroup // the two serving goroutines
	conns          sync.WaitGroup // their connections, joined by close

	mu      sync.Mutex
	leading bool
	ready   chan struct{} // closed by Run (serve set) or by close
	serve   context.Context
}

// leaderLookup bounds the etcd read that finds the leader for an answer.
const leaderLookup = 2 * time.Second

// openFront binds the ports and serves them as a follower.
func (c *Controller) openFront() (*front, error) {
	nl, err := c.listenNodes()
	if err != nil {
		return nil, err
	}
	f := &front{nodes: nl, ready: make(chan struct{})}
	if c.cfg.Cluster.ClientListen != "" {
		if f.clients, err = c.listenClientsTCP(); err != nil {
			nl.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		_ = conns.ServeIn(ctx, nl, "node", c.log, &f.conns, func(conn net.Conn) {
			if sctx, ok := f.await(ctx); ok {
				c.serveNode(sctx, conn)
				return
			}
			c.followNode(ctx, conn)
		})
	}()
	if f.clients != nil {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			_ = conns.ServeIn(ctx, f.clients, "remote client", c.log, &f.conns, func(conn net.Conn) {
				if sctx, ok := f.await(ctx); ok {
					c.serveRemoteClient(sctx, conn)
					return
				}
				c.followClient(ctx, conn)
			})
		}()
	}
	return f, nil
}

// lead marks the controller leader: from now on connections wait for Run.
func (f *front) lead() {
	f.mu.Lock()
	f.leading = true
	f.mu.Unlock()
}

// await returns Run's context once it serves, or false while following
// (or when the front closes before Run is ready: the connection is then
// answered as a follower would).
func (f *front) await(ctx context.Context) (context.Context, bool) {
	f.mu.Lock()
	leading := f.leading
	f.mu.Unlock()
	if !leading {
		return nil, false
	}
	select {
	case <-f.ready:
	case <-ctx.Done():
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.serve, f.serve != nil
}

// start hands the ports to Run's context.
func (f *front) start(ctx context.Context) {
	f.mu.Lock()
	f.serve = ctx
	f.mu.Unlock()
	close(f.ready)
}

// close stops serving, closes the ports and waits for the connections
// (those served for real end with Run's context, which ended first).
func (f *front) close() {
	f.cancel()
	f.wg.Wait() // then no connection starts any more
	f.conns.Wait()
}

// currentLeader reads the election: the leader's published addresses, or
// zero values when none leads, the lookup fails, or the leader is this
// controller: this process (it is still taking over), or an earlier
// process of it on this host whose key outlives it until its session's
// TTL (it is dead: this one holds its ports), which a client must not be
// sent back to.
func (c *Controller) currentLeader(ctx context.Context) leader.Info {
	ctx, cancel := context.WithTimeout(ctx, leaderLookup)
	defer cancel()
	cs, err := leader.List(ctx, c.etcd, c.electionPrefix)
	if err != nil || len(cs) == 0 {
		if err != nil {
			c.log.Warn("follower: cannot read the election", "err", err)
		}
		return leader.Info{}
	}
	host, _ := os.Hostname()
	if in := cs[0].Info; in.Host != host || in.Nodes != c.nodeAddr {
		return in
	}
	return leader.Info{}
}

// followClient answers one request on a TCP client connection with
// CodeNotLeader. The credential is not checked (nothing but the leader's
// address is given away) and not consumed: the client sends it, with the
// same request, to the leader.
func (c *Controller) followClient(ctx context.Context, conn net.Conn) {
	defer c.survive("remote client (follower)")
	defer conn.Close()
	slot, err := c.limits.admit(c.limits.client, conn, c.log, "remote client (follower)")
	if err != nil {
		return
	}
	defer slot.Release()
	dec := api.NewDecoder(conn)
	defer context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })()
	conn.SetReadDeadline(time.Now().Add(c.limits.ClientHelloTimeout))
	if ctx.Err() != nil { // after the deadline: it may have replaced the AfterFunc's
		return
	}
	dec.SetLimit(api.MaxCredentialLine)
	if _, err := dec.ReadLine(); err != nil {
		return
	}
	dec.SetLimit(api.MaxMessage)
	if _, err := dec.ReadLine(); err != nil {
		return
	}
	addr := c.currentLeader(ctx).Clients
	msg := "this sharqctld follows; the leader is at " + addr
	if addr == "" {
		msg = "this sharqctld follows and no leader is known yet (an election is under way): try another controller"
	}
	conn.SetWriteDeadline(time.Now().Add(requestTimeout))
	api.Encode(conn, &api.Response{V: api.Version, Error: &api.Error{Code: api.CodeNotLeader, Message: msg, Leader: addr}})
}

// followNode answers a node's hello with a refusing welcome that names
// the leader's node address.
func (c *Controller) followNode(ctx context.Context, conn net.Conn) {
	defer c.survive("node (follower)")
	defer conn.Close()
	slot, err := c.limits.admit(c.limits.hello, conn, c.log, "node connection (follower)")
	if err != nil {
		return
	}
	defer slot.Release()
	defer context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })()
	conn.SetReadDeadline(time.Now().Add(c.limits.HelloTimeout))
	if ctx.Err() != nil { // after the deadline: it may have replaced the AfterFunc's
		return
	}
	var hello api.NodeMsg
	if err := api.NewDecoder(conn).Decode(&hello); err != nil || hello.Type != api.MsgHello {
		return
	}
	addr := c.currentLeader(ctx).Nodes
	msg := "not the leader: this controller follows; the leader is at " + addr
	if addr == "" {
		msg = "not the leader: this controller follows and no leader is known yet"
	}
	conn.SetWriteDeadline(time.Now().Add(requestTimeout))
	api.Encode(conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgWelcome, Error: msg, NotLeader: true, Leader: addr})
}
