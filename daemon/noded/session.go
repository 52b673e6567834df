package noded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// conn is the node's side of its connection to the controller, over the
// successive sessions Run opens.
type conn struct {
	node      string
	secret    string
	inv       Inventory
	dial      func(ctx context.Context) (net.Conn, error)
	heartbeat time.Duration
	sup       *supervisor
	epochs    *epochs
	// ha: several controllers; a silent one (paused, or a follower that
	// accepted the connection) is left after a few heartbeats.
	ha bool
	// sessionAddr is the session port's address ("" = none).
	sessionAddr string
	log         *slog.Logger
}

// welcomeWait bounds the wait for the welcome: with several controllers,
// as long as any other message may take (readTimeout).
func (c *conn) welcomeWait() time.Duration {
	if c.ha {
		return min(welcomeTimeout, c.readTimeout())
	}
	return welcomeTimeout
}

// writeTimeout bounds one message write.
func (c *conn) writeTimeout() time.Duration { return max(10*time.Second, 3*c.heartbeat) }

// session connects, says hello, waits for the welcome and then serves the
// connection until it breaks or ctx ends. welcomed reports whether the
// controller accepted the node.
func (c *conn) session(ctx context.Context) (welcomed bool, err error) {
	nc, err := c.dial(ctx)
	if err != nil {
		return false, fmt.Errorf("node %s: dial: %w", c.node, err)
	}
	defer nc.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(sctx, func() { nc.Close() })
	defer stop()

	starts := c.sup.starting.snapshot() // before the list: see starting.go
	tasks, err := c.sup.rt.List(sctx)
	unlisted := false
	if err != nil {
		if c.sup.probe(sctx) == "" {
			return false, fmt.Errorf("node %s: list containers: %w", c.node, err)
		}
		// The runtime is down: say so, and say hello again once it is back.
		unlisted = true
	} else {
		tasks = overlay(tasks, starts, c.node)
		c.sup.out.supersede(tasks)
	}
	inv := c.inv.Inventory
	c.sup.lease.connect()
	hello := api.NodeMsg{
		V: api.NodeVersion, Type: api.MsgHello, Node: c.node, Secret: c.secret, SessionAddr: c.sessionAddr,
		Inventory: &inv, Running: runningJobs(tasks, c.sup.exitError), Unlisted: unlisted, Health: c.sup.nodeHealth(),
		SelfTests: c.sup.selfTest.passed.Load(),
		Error:     strings.Join(c.inv.Problems, "; "), Time: time.Now(), Seq: c.sup.lease.send(), GPUFaults: c.sup.gpuHealth.Faults(),
	}
	c.sup.faultAcks.sent(hello.Seq, hello.GPUFaults) // gpurefuse.go
	if err := c.send(nc, hello); err != nil {
		return false, fmt.Errorf("node %s: hello: %w", c.node, err)
	}
	nc.SetReadDeadline(time.Now().Add(c.welcomeWait()))
	dec := api.NewDecoder(nc)
	var w api.NodeMsg
	if err := dec.Decode(&w); err != nil {
		return false, fmt.Errorf("node %s: waiting for the welcome: %w", c.node, err)
	}
	switch {
	case w.Type != api.MsgWelcome:
		return false, fmt.Errorf("node %s: protocol: %q instead of a welcome", c.node, w.Type)
	case w.NotLeader:
		return false, &notLeaderError{from: nc.RemoteAddr().String(), leader: w.Leader, msg: w.Error}
	case w.Code == api.RefusedSecret:
		return false, fmt.Errorf("%w: %s", ErrBadSecret, w.Error)
	case w.Code == api.RefusedCert:
		return false, fmt.Errorf("%w: %s", ErrBadCert, w.Error)
	case w.Error != "" || w.Code != api.RefusedNoReason:
		return false, fmt.Errorf("%w: %s (%s)", ErrRefused, w.Error, w.Code)
	case w.V != api.NodeVersion:
		return false, fmt.Errorf("node %s: protocol version %d, this node speaks %d", c.node, w.V, api.NodeVersion)
	}
	if err := c.epochs.observe(w.Epoch); err != nil {
		return false, fmt.Errorf("%w: controller %s: %w", ErrRefused, nc.RemoteAddr(), err)
	}
	if w.Lease > 0 {
		c.sup.renewed(c.sup.lease.ack(w.Ack, w.Lease))
		c.sup.faultAcks.ack(w.Ack)
	} else {
		c.sup.lease.drop()
		c.log.Warn("the controller grants no job lease (it is older than this sharqd): the jobs here are not stopped when the node loses it")
	}
	nc.SetReadDeadline(time.Time{})
	c.log.Info("connected to the controller", "remote", nc.RemoteAddr().String(), "containers", len(tasks), "epoch", w.Epoch)

	errc := make(chan error, 2)
	go func() { errc <- c.writer(sctx, nc, unlisted) }()
	go func() { errc <- c.reader(sctx, nc, dec) }()
	err = <-errc
	cancel()
	<-errc
	return true, err
}

func (c *conn) send(nc net.Conn, m api.NodeMsg) error {
	nc.SetWriteDeadline(time.Now().Add(c.writeTimeout()))
	return api.Encode(nc, m)
}

// writer sends the queued job reports as they come, and a heartbeat every
// interval.
func (c *conn) writer(ctx context.Context, nc net.Conn, unlisted bool) error {
	t := time.NewTicker(c.heartbeat)
	defer t.Stop()
	for {
		for {
			m, ok := c.sup.out.peek()
			if !ok {
				break
			}
			if err := c.send(nc, api.NodeMsg{V: api.NodeVersion, Type: api.MsgJobState, Node: c.node, JobState: &m, Time: time.Now()}); err != nil {
				return fmt.Errorf("node %s: write: %w", c.node, err)
			}
			c.sup.out.pop()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := c.heartbeat1(nc); err != nil {
				return err
			}
		case <-c.sup.health.changed:
			// Once the runtime answers and the containers are re-adopted (so
			// that the orders the new hello brings find them).
			if unlisted && c.sup.health.get() == "" && c.sup.adopted.Load() {
				return fmt.Errorf("node %s: %w", c.node, errHelloAgain)
			}
			if err := c.heartbeat1(nc); err != nil {
				return err
			}
		case <-c.sup.out.notify:
		}
	}
}

// errHelloAgain ends a session whose hello could not list the containers
// once the runtime is back, so that a new hello gives the controller the
// node's complete list.
var errHelloAgain = errors.New("container runtime available again: saying hello again")

// heartbeat1 sends one heartbeat, with the node's health.
func (c *conn) heartbeat1(nc net.Conn) error {
	m := api.NodeMsg{V: api.NodeVersion, Type: api.MsgHeartbeat, Node: c.node, Health: c.sup.nodeHealth(), Time: time.Now(), Seq: c.sup.lease.send(),
		SelfTests: c.sup.selfTest.passed.Load(), GPUFaults: c.sup.gpuHealth.Faults(), GPUUse: c.sup.use.report()}
	c.sup.faultAcks.sent(m.Seq, m.GPUFaults) // gpurefuse.go
	if err := c.send(nc, m); err != nil {
		return fmt.Errorf("node %s: heartbeat: %w", c.node, err)
	}
	return nil
}

// readTimeout is how long the node waits for any message (the controller
// sends a heartbeat every interval): a controller that stopped answering
// (paused, or its host gone) is left for the next one in the list.
func (c *conn) readTimeout() time.Duration { return max(3*time.Second, 3*c.heartbeat) }

// reader hands the controller's orders to the supervisor, in order per job.
// The deadline is armed once the controller has sent a heartbeat (a
// controller that sends none is not held to it).
func (c *conn) reader(ctx context.Context, nc net.Conn, dec *api.Decoder) error {
	beats := false
	for {
		var m api.NodeMsg
		if beats {
			nc.SetReadDeadline(time.Now().Add(c.readTimeout()))
		}
		if err := dec.Decode(&m); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("node %s: connection closed", c.node)
			}
			return fmt.Errorf("node %s: read: %w", c.node, err)
		}
		beats = beats || m.Type == api.MsgHeartbeat
		c.dispatch(m)
	}
}

func (c *conn) dispatch(m api.NodeMsg) {
	s := c.sup
	switch m.Type {
	case api.MsgStart, api.MsgStop, api.MsgRemove, api.MsgSignal, api.MsgSession, api.MsgHeartbeat, api.MsgNotice:
		if err := c.epochs.check(m.Epoch); err != nil {
			c.log.Warn("order refused", "type", m.Type, "err", err)
			return
		}
	}
	switch m.Type {
	case api.MsgStart:
		if m.Start == nil {
			c.log.Warn("start message without an order")
			return
		}
		o := m.Start
		s.starting.begin(o.Job.ID, o.Run)
		s.serial.Do(o.Job.ID, func() {
			defer s.starting.end(o.Job.ID, o.Run)
			s.start(o)
		})
	case api.MsgStop:
		if m.Stop == nil {
			c.log.Warn("stop message without an order")
			return
		}
		o := *m.Stop
		s.serial.Do(o.JobID, func() { s.stop(o) })
	case api.MsgSignal:
		if m.Signal == nil {
			c.log.Warn("signal message without an order")
			return
		}
		o := *m.Signal
		s.serial.Do(o.JobID, func() { s.signal(o) })
	case api.MsgNotice:
		if m.Notice == nil {
			c.log.Warn("notice message without a notice")
			return
		}
		o := *m.Notice
		s.serial.Do(o.JobID, func() { s.notice(o) })
	case api.MsgRemove:
		if m.Stop == nil {
			c.log.Warn("remove message without a job id")
			return
		}
		id := m.Stop.JobID
		s.serial.Do(id, func() { s.remove(id) })
	case api.MsgSession:
		if m.Session == nil || s.sessions == nil {
			c.log.Warn("session order without a session, or sessions are off on this node")
			return
		}
		s.sessions.grant(m.Session)
	case api.MsgHeartbeat:
		// The controller's acknowledgement renews the lease (lease.go).
		if m.Lease > 0 {
			s.renewed(s.lease.ack(m.Ack, m.Lease))
			s.faultAcks.ack(m.Ack)
		}
	case api.MsgWelcome:
	default:
		c.log.Warn("unexpected message from the controller", "type", m.Type)
	}
}
