package ctld

import (
	"net"
	"strconv"
	"time"

	"github.com/sharq-hpc/sharq/internal/conns"
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
	// caps them per remote address; default 16.
	HelloPending, HelloPerAddr int
	// HelloTimeout is how long a node connection has to say hello; default 5s.
	HelloTimeout time.Duration
	// UserBytes caps the script, environment and command bytes of one
	// user's unfinished jobs (userbytes.go); default 64 MiB.
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
	if l.UserBytes <= 0 {
		l.UserBytes = defaultUserBytes
	}
	return l
}

// connLimits are the limiters of a running controller.
type connLimits struct {
	Limits
	perUser  *conns.Limiter // key: uid
	hello    *conns.Limiter // key: "" (all unauthenticated node connections)
	helloPer *conns.Limiter // key: remote IP
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
		perUser:  conns.NewLimiter("client connections of uid", l.ConnsPerUser),
		hello:    conns.NewLimiter("node connections without hello", l.HelloPending),
		helloPer: conns.NewLimiter("node connections without hello from", l.HelloPerAddr),
	}
}

// user takes a client connection slot of uid.
func (cl *connLimits) user(uid uint32) (func(), error) {
	return cl.perUser.Acquire(strconv.FormatUint(uint64(uid), 10))
}

// unauthenticated takes a slot for a node connection until its hello.
func (cl *connLimits) unauthenticated(remote net.Addr) (func(), error) {
	host := remote.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	all, err := cl.hello.Acquire("all")
	if err != nil {
		return nil, err
	}
	one, err := cl.helloPer.Acquire(host)
	if err != nil {
		all()
		return nil, err
	}
	return func() { one(); all() }, nil
}
