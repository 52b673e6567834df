package ctld

import (
	"crypto/x509"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// startWindow is how many start orders a node may have unanswered: the
// rest wait in the controller until the node reports on earlier ones
// (running, exited or failed). Orders to a node are thus flow-controlled:
// a 100,000-subjob array neither floods the node with concurrent starts
// nor fills the connection.
const startWindow = 32

// nodeWriteTimeout bounds one message write to a node.
const nodeWriteTimeout = 30 * time.Second

// nodeConn is one connection from a sharqd. The loop queues orders with
// send, which never blocks and never drops one; a writer goroutine sends
// them in order, holding a start back while startWindow starts are
// unanswered (and what follows it, so one job's orders keep their order).
// The queue holds only orders for the controller's own jobs, so its size
// is bounded by what the controller already holds. A node that stops
// reading is disconnected by the write timeout; it reconnects and
// reconciles from its hello.
type nodeConn struct {
	name string
	c    net.Conn
	done chan struct{} // closed when the connection is
	once sync.Once

	// isTLS: the connection is mutual TLS; cert is the node's verified
	// leaf certificate (nodecert.go), which must name the node.
	isTLS bool
	cert  *x509.Certificate

	// epoch goes in every message; a heartbeat goes out every interval,
	// so that the node notices a controller that stopped (paused, gone).
	epoch     int64
	heartbeat time.Duration

	// lease is the job lease granted with every heartbeat (the
	// controller's current job_lease).
	lease *atomic.Int64

	mu       sync.Mutex
	queue    []api.NodeMsg
	inflight map[runKey]bool // starts sent and not yet answered
	wake     chan struct{}   // one pending wake-up for the writer
	// ack is the node's last message number received (api.NodeMsg.Seq),
	// acknowledged by the next heartbeat; ackDue: one goes out now.
	ack    uint64
	ackDue bool
}

// runKey names one run of a job.
type runKey struct {
	job string
	run int
}

func newNodeConn(name string, c net.Conn, epoch int64, heartbeat time.Duration, lease *atomic.Int64) *nodeConn {
	nc := &nodeConn{name: name, c: c, done: make(chan struct{}), epoch: epoch, heartbeat: heartbeat, lease: lease,
		inflight: map[runKey]bool{}, wake: make(chan struct{}, 1)}
	go nc.writer()
	return nc
}

// send queues m.
func (nc *nodeConn) send(m api.NodeMsg) {
	nc.mu.Lock()
	nc.queue = append(nc.queue, m)
	nc.mu.Unlock()
	nc.poke()
}

// answered records the node's first report on a run, which frees its
// place in the start window.
func (nc *nodeConn) answered(job string, run int) {
	nc.mu.Lock()
	k := runKey{job, run}
	found := nc.inflight[k]
	delete(nc.inflight, k)
	nc.mu.Unlock()
	if found {
		nc.poke()
	}
}

// acknowledge has a heartbeat acknowledge the node's message seq at once
// (the loop calls it once it has recorded the message: the node's lease
// then runs from before the controller last heard from it).
func (nc *nodeConn) acknowledge(seq uint64) {
	nc.mu.Lock()
	if seq > nc.ack {
		nc.ack, nc.ackDue = seq, true
	}
	nc.mu.Unlock()
	nc.poke()
}

// beat is a heartbeat acknowledging the node's last message; due reports
// whether an acknowledgement was waiting.
func (nc *nodeConn) beat() (m api.NodeMsg, due bool) {
	nc.mu.Lock()
	ack, due := nc.ack, nc.ackDue
	nc.ackDue = false
	nc.mu.Unlock()
	m = api.NodeMsg{V: api.NodeVersion, Type: api.MsgHeartbeat, Time: time.Now(), Ack: ack}
	if nc.lease != nil {
		m.Lease = time.Duration(nc.lease.Load())
	}
	return m, due
}

func (nc *nodeConn) poke() {
	select {
	case nc.wake <- struct{}{}:
	default:
	}
}

func (nc *nodeConn) close() {
	nc.once.Do(func() {
		close(nc.done)
		nc.c.Close()
	})
}

// next takes the head of the queue unless it is a start the window holds
// back.
func (nc *nodeConn) next() (api.NodeMsg, bool) {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	if len(nc.queue) == 0 {
		return api.NodeMsg{}, false
	}
	m := nc.queue[0]
	if m.Type == api.MsgStart && m.Start != nil {
		if len(nc.inflight) >= startWindow {
			return api.NodeMsg{}, false
		}
		nc.inflight[runKey{m.Start.Job.ID, m.Start.Run}] = true
	}
	nc.queue[0] = api.NodeMsg{}
	nc.queue = nc.queue[1:]
	return m, true
}

// write sends one message, with the connection's epoch.
func (nc *nodeConn) write(m api.NodeMsg) bool {
	m.Epoch = nc.epoch
	nc.c.SetWriteDeadline(time.Now().Add(nodeWriteTimeout))
	if err := api.Encode(nc.c, m); err != nil {
		nc.close()
		return false
	}
	return true
}

func (nc *nodeConn) writer() {
	hb := time.NewTicker(nc.heartbeat)
	defer hb.Stop()
	welcomed := false
	for {
		for {
			// Not queued: an acknowledgement never waits behind orders.
			if m, due := nc.beat(); due && !nc.write(m) {
				return
			}
			m, ok := nc.next()
			if !ok {
				break
			}
			if !nc.write(m) {
				return
			}
			welcomed = true
		}
		select {
		case <-nc.done:
			return
		case <-hb.C:
			// Not queued: a heartbeat never waits behind held starts. None
			// before the welcome (the first message queued), which a loop
			// busy past an interval has not queued yet: the node takes
			// only a welcome first.
			if !welcomed {
				continue
			}
			if m, _ := nc.beat(); !nc.write(m) {
				return
			}
		case <-nc.wake:
		}
	}
}

// remoteIP is the address the node's connection comes from (nil if not
// an IP connection).
func (nc *nodeConn) remoteIP() net.IP {
	if a, ok := nc.c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP
	}
	return nil
}
