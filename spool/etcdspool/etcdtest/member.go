package etcdtest

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Member is one in-process etcd member.
type Member struct {
	Etcd      *embed.Etcd
	ClientURL string
	stop      sync.Once
}

// Stop stops the member (at most once; the test's cleanup calls it too).
func (m *Member) Stop() { m.stop.Do(m.Etcd.Close) }

// MemberConfig describes one member of a cluster.
type MemberConfig struct {
	Name      string
	Dir       string
	ClientURL string
	PeerURL   string
	// Cluster is etcd's --initial-cluster: name=peerURL,...
	Cluster string
	// New is true when the cluster is being bootstrapped (--initial-cluster-state new).
	New bool
	// QuotaBytes is --quota-backend-bytes (0: etcd's default, 2 GiB).
	QuotaBytes int64
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// Config is the embed configuration of mc: quiet logs, fast elections,
// 127.0.0.1 only.
func Config(mc MemberConfig) (*embed.Config, error) {
	cfg := embed.NewConfig()
	cfg.Name = mc.Name
	cfg.Dir = mc.Dir
	cu, err := url.Parse(mc.ClientURL)
	if err != nil {
		return nil, err
	}
	pu, err := url.Parse(mc.PeerURL)
	if err != nil {
		return nil, err
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = mc.Cluster
	cfg.InitialClusterToken = "sharq-test"
	cfg.ClusterState = embed.ClusterStateFlagExisting
	if mc.New {
		cfg.ClusterState = embed.ClusterStateFlagNew
	}
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.TickMs = 50
	cfg.ElectionMs = 500
	cfg.QuotaBackendBytes = mc.QuotaBytes
	cfg.ListenMetricsUrls = nil
	return cfg, nil
}

// Start runs one single-member cluster in this process for the duration of
// the test and returns it.
func Start(t testing.TB) *Member {
	t.Helper()
	return StartQuota(t, 0)
}

// StartQuota is Start with a backend quota in bytes (0: etcd's default).
func StartQuota(t testing.TB, quota int64) *Member {
	t.Helper()
	ports, err := FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	cu, pu := fmt.Sprintf("http://127.0.0.1:%d", ports[0]), fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	cfg, err := Config(MemberConfig{Name: "m0", Dir: t.TempDir(), ClientURL: cu, PeerURL: pu,
		Cluster: "m0=" + pu, New: true, QuotaBytes: quota})
	if err != nil {
		t.Fatal(err)
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		t.Fatal("etcd member not ready after 30s")
	}
	m := &Member{Etcd: e, ClientURL: cu}
	t.Cleanup(m.Stop)
	return m
}

// StartCluster runs a cluster of n members in this process for the
// duration of the test and returns them, each ready; Endpoints lists their
// client URLs. Stop one to lose it (its clients see their connections
// break, as after a kill).
func StartCluster(t testing.TB, n int) []*Member {
	t.Helper()
	ports, err := FreePorts(2 * n)
	if err != nil {
		t.Fatal(err)
	}
	var peers []string
	for i := range n {
		peers = append(peers, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[2*i+1]))
	}
	cfgs := make([]*embed.Config, n)
	for i := range n {
		cfg, err := Config(MemberConfig{Name: fmt.Sprintf("m%d", i), Dir: t.TempDir(),
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			Cluster: strings.Join(peers, ","), New: true})
		if err != nil {
			t.Fatal(err)
		}
		cfgs[i] = cfg
	}
	// Members start together: each waits for a quorum of peers.
	ms := make([]*Member, n)
	errs := make(chan error, n)
	for i, cfg := range cfgs {
		go func() {
			e, err := embed.StartEtcd(cfg)
			if err == nil {
				ms[i] = &Member{Etcd: e, ClientURL: cfg.ListenClientUrls[0].String()}
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("start etcd member: %v", err)
		}
	}
	for _, m := range ms {
		t.Cleanup(m.Stop)
		select {
		case <-m.Etcd.Server.ReadyNotify():
		case <-time.After(30 * time.Second):
			t.Fatal("etcd member not ready after 30s")
		}
	}
	return ms
}

// Endpoints is the members' client URLs, comma-separated (for Client).
func Endpoints(ms []*Member) string {
	var eps []string
	for _, m := range ms {
		eps = append(eps, m.ClientURL)
	}
	return strings.Join(eps, ",")
}

// Leader returns the index of the member that leads the raft group now.
func Leader(ms []*Member) int {
	for i, m := range ms {
		if m.Etcd.Server.Leader() == m.Etcd.Server.MemberID() {
			return i
		}
	}
	return -1
}

// Client connects to endpoints (comma-separated URLs) for the duration of
// the test.
func Client(t testing.TB, endpoints string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(endpoints, ","), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}
