package ctld

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/testcert"
)

// BenchmarkHelloStorm: every node of a 1,000-node cluster says hello at
// once to a controller that has just started (a restart, or a new leader
// after a failover), each over mutual TLS with a certificate naming it,
// from an address of its own (127.0.x.y), with its inventory, as sharqd
// does. A node whose connection is refused (the controller's limit on
// connections that have not said hello: Limits.HelloPending) dials
// again after sharqd's first backoff (nodeMinBackoff); with a slot for
// every configured node there is none. Reported:
// all-welcomed-ms (from the first dial to the last welcome), refused
// (connections that got no welcome) and started-ms (from the last welcome
// until a job submitted then has started on a node: the first pass with
// every node up). Certificates are made before the clock starts.
func BenchmarkHelloStorm(b *testing.B) {
	// nodeMinBackoff is noded.DefaultMinBackoff (not imported: the
	// controller's tests do not build the node daemon).
	const nodeMinBackoff = 500 * time.Millisecond
	const nodes = 1000
	dir := b.TempDir()
	ca := testcert.NewCA(b, dir)
	ctlCert, ctlKey := ca.Issue(b, dir, "ctl", "ctl", "127.0.0.1")
	pool := x509.NewCertPool()
	pool.AddCert(leafOf(b, ca.File))
	names := make([]string, nodes)
	specs := make([]string, nodes)
	pairs := make([]tls.Certificate, nodes)
	for i := range nodes {
		names[i] = fmt.Sprintf("n%04d", i+1)
		specs[i] = names[i] + ":8"
		c, k := ca.Issue(b, dir, names[i], names[i], names[i])
		p, err := tls.LoadX509KeyPair(c, k)
		if err != nil {
			b.Fatal(err)
		}
		pairs[i] = p
	}
	for range b.N {
		b.StopTimer()
		tc := prepareTestCluster(b, specs, twoShares,
			fmt.Sprintf("tls_cert = %q\ntls_key = %q\ntls_ca = %q", ctlCert, ctlKey, ca.File), Limits{})
		tc.start()
		b.StartTimer()
		var refused atomic.Int64
		var wg sync.WaitGroup
		conns := make([]net.Conn, nodes)
		started := make(chan string, nodes)
		begin := time.Now()
		for i := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				local := &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i/250), byte(1+i%250))}
				cfg := &tls.Config{Certificates: []tls.Certificate{pairs[i]}, RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13}
				for try := 0; try < 100; try++ {
					if try > 0 {
						time.Sleep(nodeMinBackoff)
					}
					d := &net.Dialer{Timeout: testWait, LocalAddr: local}
					conn, err := tls.DialWithDialer(d, "tcp", tc.listen, cfg)
					if err != nil {
						refused.Add(1)
						continue
					}
					hello := api.NodeMsg{V: api.NodeVersion, Type: api.MsgHello, Node: names[i], Secret: testSecret, Seq: 1,
						Inventory: &api.Inventory{Source: "config", CPUs: 8}, Time: time.Now()}
					dec := api.NewDecoder(conn)
					var w api.NodeMsg
					if api.Encode(conn, hello) != nil || dec.Decode(&w) != nil || w.Type != api.MsgWelcome || w.Error != "" {
						conn.Close()
						refused.Add(1)
						continue
					}
					conns[i] = conn
					go func() { // the node reads its orders
						for {
							var m api.NodeMsg
							if dec.Decode(&m) != nil {
								return
							}
							if m.Type == api.MsgStart {
								started <- names[i]
							}
						}
					}()
					return
				}
			}()
		}
		wg.Wait()
		welcomed := time.Since(begin)
		for i, c := range conns {
			if c == nil {
				b.Fatalf("node %s never welcomed", names[i])
			}
		}
		up := time.Now()
		tc.submit("a", 1, nil)
		select {
		case <-started:
		case <-time.After(testWait):
			b.Fatal("no job started after the storm")
		}
		b.ReportMetric(float64(welcomed.Milliseconds()), "all-welcomed-ms")
		b.ReportMetric(float64(refused.Load()), "refused")
		b.ReportMetric(float64(time.Since(up).Milliseconds()), "started-ms")
		b.StopTimer()
		for _, c := range conns {
			c.Close()
		}
		tc.stop()
		b.StartTimer()
	}
}
