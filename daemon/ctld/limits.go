package ctld

import (
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/sharq-hpc/sharq/internal/conns"
	"github.com/sharq-hpc/sharq/internal/lograte"
)

// Limits bound what one peer may hold of the controller at once, so that
// a flood of connections cannot exhaust its file descriptors (SECURITY.md).
// Zero fields take the defaults.
type Limits struct {
	// ConnsPerUser caps the client connections of one uid (root included)
	// at once; default 256.
	ConnsPerUser int
	// HelloPending caps the node connections that have not said hello
	// yet, in all; default 256 more than the nodes the configuration has
	// when the controller starts (defaultHelloPending), so that every node
	// can come back at once after a restart or a failover. HelloPerAddr
	// caps them per remote address; default 16. A new connection over
	// either cap closes the oldest one still silent (conns.Pending): it is
	// not refused.
	HelloPending, HelloPerAddr int
	// HelloTimeout is how long a node connection has to say hello; default 5s.
	HelloTimeout time.Duration
	// ClientPending and ClientPendingPerAddr are HelloPending and
	// HelloPerAddr for the TCP client port (client_listen), whose
	// connections until their first credential and request line hold
	// slots of their own, never a node's; defaults 256 and 16.
	ClientPending, ClientPendingPerAddr int
	// ClientHelloTimeout is how long a new client connection has to send
	// its first credential line (then its request has requestTimeout, and
	// until it is read a newer connection may take its slot); default 5s.
	ClientHelloTimeout time.Duration
	// RuntimeRetry is how long a node drained because its container
	// runtime failed jobs' starts (runtimefail.go) stays so before it is
	// resumed on trial; default 10 minutes.
	RuntimeRetry time.Duration
	// UserBytes caps the bytes one user's unfinished jobs make the
	// controller hold (userbytes.go); 0: the cluster's
	// max_job_bytes_per_user.
	UserBytes int64
}

// defaultHelloPending is Limits.HelloPending's default for a cluster of
// nodes configured nodes: a slot for each (a controller restart or a
// failover brings them all back together: BenchmarkHelloStorm) and 256
// to spare. A slot lasts until the hello, at most HelloTimeout.
func defaultHelloPending(nodes int) int { return 256 + nodes }

func (l Limits) withDefaults() Limits {
	if l.ConnsPerUser <= 0 {
		l.ConnsPerUser = 256
	}
	if l.HelloPending <= 0 {
		l.HelloPending = 256
	}
	if l.HelloPerAddr <= 0 {
		l.HelloPerAddr = 16
	}
	if l.HelloTimeout <= 0 {
		l.HelloTimeout = 5 * time.Second
	}
	if l.RuntimeRetry <= 0 {
		l.RuntimeRetry = nodeFaultWindow
	}
	if l.ClientPending <= 0 {
		l.ClientPending = 256
	}
	if l.ClientPendingPerAddr <= 0 {
		l.ClientPendingPerAddr = 16
	}
	if l.ClientHelloTimeout <= 0 {
		l.ClientHelloTimeout = 5 * time.Second
	}
	return l
}

// connLimits are the limiters of a running controller: node hellos,
// client connections before their credential, and each uid's client
// connections, which never share slots.
type connLimits struct {
	Limits
	perUser *conns.Limiter // key: uid
	hello   *conns.Pending // key: remote IP; node connections before their hello
	client  *conns.Pending // key: remote IP; TCP client connections before their credential
	// logs bounds the lines that connections which never showed who they
	// are make the controller write (lograte).
	logs *lograte.Limiter
}

// forNodes fills in HelloPending's default for a cluster of nodes nodes.
func (l Limits) forNodes(nodes int) Limits {
	if l.HelloPending <= 0 {
		l.HelloPending = defaultHelloPending(nodes)
	}
	return l
}

func newConnLimits(l Limits) *connLimits {
	l = l.withDefaults()
	return &connLimits{Limits: l,
		perUser: conns.NewLimiter("client connections of uid", l.ConnsPerUser),
		hello:   conns.NewPending("node connections without hello", l.HelloPerAddr, l.HelloPending),
		client:  conns.NewPending("client connections without a credential", l.ClientPendingPerAddr, l.ClientPending),
		logs:    lograte.New(lograte.DefaultBurst, lograte.DefaultWindow, nil),
	}
}

// user takes a client connection slot of uid.
func (cl *connLimits) user(uid uint32) (func(), error) {
	return cl.perUser.Acquire(strconv.FormatUint(uint64(uid), 10))
}

// admit takes a slot of p for conn until it has spoken, closing the
// oldest silent connections of its address (or of all) if the slots are
// full; what it closed is logged as what, at most a burst a window.
func (cl *connLimits) admit(p *conns.Pending, conn net.Conn, log *slog.Logger, what string) (*conns.Slot, error) {
	host := addrHost(conn.RemoteAddr())
	s, evicted, err := p.Admit(host, func() { conn.Close() })
	if len(evicted) > 0 {
		cl.logs.Warn(log, what+": closed the oldest silent connections to make room", "remote", conn.RemoteAddr(), "closed_from", evicted)
	}
	return s, err
}

// addrHost is a remote address without its port.
func addrHost(remote net.Addr) string {
	host := remote.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host
}
