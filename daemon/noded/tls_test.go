//go:build !unit

package noded_test

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"slices"
	"testing"

	"github.com/sharq-hpc/sharq/internal/testcert"
)

func TestMutualTLS(t *testing.T) {
	e := newEnv(t)
	ca := testcert.NewCA(t, e.dir)
	srvCert, srvKey := ca.Issue(t, e.dir, "ctl", "ctl", "127.0.0.1")
	pair, err := tls.LoadX509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	e.ctl = newCtl(t, testSecret, &tls.Config{
		Certificates: []tls.Certificate{pair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13,
	})
	c := &e.cfg.Cluster
	c.Controller = e.ctl.addr()
	c.TLSCert, c.TLSKey = ca.Issue(t, e.dir, "n1", "n1", "n1") // the node's own certificate names it
	c.TLSCA = ca.File
	e.run(t, "n1") // Options.Dial unset: the configuration's TLS dialer
	p := e.ctl.accept(t)
	state := p.conn.(*tls.Conn).ConnectionState()
	if len(state.PeerCertificates) == 0 || !slices.Contains(state.PeerCertificates[0].DNSNames, "n1") {
		t.Errorf("the node presented %v", state.PeerCertificates)
	}
	if p.hello.Node != "n1" {
		t.Errorf("hello %+v", p.hello)
	}
}
