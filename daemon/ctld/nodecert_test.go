package ctld

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/testcert"
)

func leaf(t *testing.T, certFile string) *x509.Certificate { return leafOf(t, certFile) }

// leafOf is leaf for a test or a benchmark.
func leafOf(t testing.TB, certFile string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := pem.Decode(b)
	c, err := x509.ParseCertificate(p.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCertNamesNode: the rule a node's certificate is held to (exact DNS
// or IP SAN; no wildcard, no common name).
func TestCertNamesNode(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, dir)
	cases := []struct {
		name  string
		cn    string
		sans  []string
		node  string
		names bool
	}{
		{"DNS SAN", "x", []string{"gpu01"}, "gpu01", true},
		{"one of several", "x", []string{"gpu01.lab.example", "gpu01", "10.0.0.1"}, "gpu01", true},
		{"case", "x", []string{"GPU01.lab.example"}, "gpu01.lab.example", true},
		{"another node", "gpu02", []string{"gpu02"}, "gpu01", false},
		{"short name of the FQDN", "x", []string{"gpu01.lab.example"}, "gpu01", false},
		{"common name only", "gpu01", nil, "gpu01", false},
		{"wildcard", "x", []string{"*.lab.example"}, "gpu01.lab.example", false},
		{"IP SAN for a node named by its address", "x", []string{"10.0.0.7"}, "10.0.0.7", true},
		{"another address", "x", []string{"10.0.0.8"}, "10.0.0.7", false},
		{"DNS SAN spelling an address", "x", []string{"gpu01"}, "10.0.0.7", false},
		{"empty name", "x", []string{"gpu01"}, "", false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cert, _ := ca.Issue(t, dir, fmt.Sprint("c", i), c.cn, c.sans...)
			l := leaf(t, cert)
			if got := certNamesNode(l, c.node); got != c.names {
				t.Fatalf("certNamesNode(%v, %q) = %v, want %v", certNames(l), c.node, got, c.names)
			}
			err := checkNodeCert(true, l, c.node)
			if (err == nil) != c.names || (err != nil && refusalCode(err) != api.RefusedCert) {
				t.Fatalf("checkNodeCert: %v", err)
			}
			if err := checkNodeCert(false, nil, c.node); err != nil {
				t.Fatalf("without TLS: %v", err)
			}
		})
	}
	if err := checkNodeCert(true, nil, "gpu01"); refusalCode(err) != api.RefusedCert {
		t.Fatalf("TLS without a certificate: %v", err)
	}
}

// lockedBuffer is a log the test reads while the controller writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNodeCertOverTLS: over the node port's real mutual TLS, each node's
// certificate (from the cluster's CA) names it. n1's certificate says
// hello as n1 and is welcomed; saying hello as n2 (with n2's secret and
// an empty list of running jobs, which would requeue n2's job) it is
// refused with bad_cert, and n2's connection and job are untouched. A
// node configured by its IP address is welcomed with a certificate for
// that address.
func TestNodeCertOverTLS(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, dir)
	ctlCert, ctlKey := ca.Issue(t, dir, "ctl", "ctl", "127.0.0.1")
	var addr string // the controller's node port, once configured
	cert := func(cn string, sans ...string) func() (net.Conn, error) {
		c, k := ca.Issue(t, dir, cn, cn, sans...)
		pair, err := tls.LoadX509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(leaf(t, ca.File))
		return func() (net.Conn, error) {
			d := &net.Dialer{Timeout: testWait}
			return tls.DialWithDialer(d, "tcp", addr, &tls.Config{
				Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13})
		}
	}
	tc := prepareTestCluster(t, []string{"n1:8", "n2:8", "127.0.0.3:8"}, twoShares,
		fmt.Sprintf("tls_cert = %q\ntls_key = %q\ntls_ca = %q", ctlCert, ctlKey, ca.File), Limits{})
	addr = tc.listen
	logs := &lockedBuffer{}
	tc.log = slog.New(slog.NewTextHandler(logs, nil))
	tc.start()
	t.Cleanup(tc.stop)
	asN1, asN2, asIP := cert("n1", "n1"), cert("n2", "n2"), cert("ipnode", "127.0.0.3")
	cnOnly := cert("cn-n2") // common name cn-n2, no SANs

	tc.dialNode = asN2
	n2 := tc.attachNode("n2")
	id := tc.submit("a", 4, nil)
	st := n2.expect(api.MsgStart).Start
	if st.Job.ID != id {
		t.Fatalf("n2 got %+v, want %s", st, id)
	}
	n2.report(id, st.Run, api.RunRunning, 0)
	tc.waitState(id, api.StateRunning)

	refused := []struct {
		name string
		dial func() (net.Conn, error)
		node string
	}{
		{"n1's certificate as n2", asN1, "n2"},
		{"n1's certificate as the node by address", asN1, "127.0.0.3"},
		{"a certificate that names no host", cnOnly, "n2"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			conn, err := c.dial()
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(testWait))
			if err := api.Encode(conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgHello, Node: c.node, Secret: testSecret,
				Inventory: &api.Inventory{Source: "config", CPUs: 8}, Seq: 1}); err != nil {
				t.Fatal(err)
			}
			var w api.NodeMsg
			if err := api.NewDecoder(conn).Decode(&w); err != nil || w.Type != api.MsgWelcome || w.Code != api.RefusedCert {
				t.Fatalf("welcome %+v (%v), want code %q", w, err, api.RefusedCert)
			}
			if !strings.Contains(w.Error, fmt.Sprintf("not node %q", c.node)) {
				t.Errorf("refusal %q does not say which node", w.Error)
			}
		})
	}
	// The impostors reached none of n2's state: its connection got
	// nothing (no stop, no second start), its job runs on, as the same run.
	n2.quiet(300 * time.Millisecond)
	if j := tc.job(id); j.State != api.StateRunning || len(j.Allocs) != 1 || j.Allocs[0].Node != "n2" {
		t.Fatalf("n2's job after the refused hellos: %s %+v", j.State, j.Allocs)
	}
	log := logs.String()
	for _, want := range []string{`node=n2`, `cert="[n1 CN=n1]"`, `remote=127.0.0.1:`, `names [n1 CN=n1], not node \"n2\"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the controller's log lacks %s:\n%s", want, log)
		}
	}

	// Each node with its own certificate is welcomed.
	tc.dialNode = asN1
	tc.attachNode("n1")
	tc.dialNode = asIP
	tc.attachNode("127.0.0.3")
	for _, n := range tc.call(api.Request{Op: api.OpNodes}).Nodes {
		if n.State != "up" {
			t.Errorf("node %s: %s %v", n.Name, n.State, n.Problems)
		}
	}
	n2.report(id, st.Run, api.RunExited, 0)
	tc.waitState(id, api.StateFinished)
}
