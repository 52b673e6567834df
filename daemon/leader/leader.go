package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Info is what a candidate publishes in its election key.
type Info struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Nodes is the address node daemons dial to reach this controller.
	Nodes string `json:"nodes"`
	// Clients is the TCP address client commands dial ("" if none).
	Clients string `json:"clients,omitempty"`
	// Since is when this candidate started campaigning.
	Since time.Time `json:"since"`
}

// ErrLost: the session ended; this controller is not the leader any more.
var ErrLost = errors.New("leadership lost: etcd session ended")

// Leader is a won election. Create it with Campaign.
type Leader struct {
	sess   *concurrency.Session
	el     *concurrency.Election
	prefix string // with the trailing '/'
	key    string
	rev    int64
	ttl    time.Duration
	since  time.Time

	mu      sync.Mutex
	renewed time.Time // local receipt of the last lease renewal (monotonic)
	lost    chan struct{}
	once    sync.Once
}

// Campaign joins the election under prefix with a session of ttl and
// blocks until this candidate leads or ctx ends.
func Campaign(ctx context.Context, cli *clientv3.Client, prefix string, ttl time.Duration, info Info) (*Leader, error) {
	prefix = strings.TrimSuffix(prefix, "/")
	secs := int(ttl / time.Second)
	if secs < 1 {
		return nil, fmt.Errorf("leader: session TTL %v is under a second", ttl)
	}
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(secs), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("leader: etcd session: %w", err)
	}
	if info.Since.IsZero() {
		info.Since = time.Now()
	}
	val, err := json.Marshal(info)
	if err != nil {
		sess.Close()
		return nil, err
	}
	el := concurrency.NewElection(sess, prefix)
	if err := el.Campaign(ctx, string(val)); err != nil {
		sess.Close()
		return nil, fmt.Errorf("leader: campaign under %s: %w", prefix, err)
	}
	l := &Leader{sess: sess, el: el, prefix: prefix + "/", key: el.Key(), rev: el.Rev(), ttl: time.Duration(secs) * time.Second,
		since: time.Now(), renewed: time.Now(), lost: make(chan struct{})}
	// Our own view of the lease's renewals, for Valid.
	ka, err := cli.KeepAlive(sess.Ctx(), sess.Lease())
	if err != nil {
		sess.Close()
		return nil, fmt.Errorf("leader: keep alive: %w", err)
	}
	go l.watch(ka)
	return l, nil
}

func (l *Leader) watch(ka <-chan *clientv3.LeaseKeepAliveResponse) {
	defer l.markLost()
	for {
		select {
		case resp, ok := <-ka:
			if !ok || resp.TTL <= 0 {
				return
			}
			l.mu.Lock()
			l.renewed = time.Now()
			l.mu.Unlock()
		case <-l.sess.Done():
			return
		}
	}
}

func (l *Leader) markLost() { l.once.Do(func() { close(l.lost) }) }

// Done is closed when the session ends: the controller must stop.
func (l *Leader) Done() <-chan struct{} { return l.lost }

// Valid reports whether the lease can still be alive by the local clock:
// its last renewal was seen less than two thirds of a TTL ago (renewals are
// sent every third of it; the margin left covers the renewal's round trip).
// A leader that was paused is not valid until it has heard from etcd again.
func (l *Leader) Valid() bool {
	select {
	case <-l.lost:
		return false
	default:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.renewed) < l.ttl*2/3
}

// Epoch is the leader's epoch: its election key's create revision.
func (l *Leader) Epoch() int64 { return l.rev }

// Since is when this candidate won.
func (l *Leader) Since() time.Time { return l.since }

// Key is the leader's election key.
func (l *Leader) Key() string { return l.key }

// Fence returns the comparisons that prove this candidate leads.
func (l *Leader) Fence() []clientv3.Cmp { return FenceFor(l.prefix, l.key, l.rev) }

// FenceFor is the fence of the candidate key created at rev under prefix
// (ending in '/'): the key still exists with that create revision, and no
// key under the prefix was created before it.
func FenceFor(prefix, key string, rev int64) []clientv3.Cmp {
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(key), "=", rev),
		clientv3.Compare(clientv3.CreateRevision(prefix), ">", rev-1).WithPrefix(),
	}
}

// Resign gives up leadership (a graceful stop): the next candidate takes
// over at once instead of after the TTL.
func (l *Leader) Resign(ctx context.Context) error {
	defer l.markLost()
	err := l.el.Resign(ctx)
	if cerr := l.sess.Close(); err == nil {
		err = cerr
	}
	return err
}

// Candidate is one controller in the election.
type Candidate struct {
	Key    string
	Epoch  int64 // its key's create revision
	Info   Info
	Leader bool
}

// List returns the candidates under prefix, the leader first.
func List(ctx context.Context, cli *clientv3.Client, prefix string) ([]Candidate, error) {
	prefix = strings.TrimSuffix(prefix, "/") + "/"
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("leader: list %s: %w", prefix, err)
	}
	out := make([]Candidate, 0, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		c := Candidate{Key: string(kv.Key), Epoch: kv.CreateRevision, Leader: i == 0}
		if err := json.Unmarshal(kv.Value, &c.Info); err != nil {
			c.Info = Info{Host: "(unreadable: " + err.Error() + ")"}
		}
		out = append(out, c)
	}
	return out, nil
}
