package noded

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/testcert"
)

// tlsController is one controller of an HA cluster for the dial tests: a
// real TLS listener on ip whose certificate names only name, which
// requires a client certificate signed by the cluster CA and reports the
// name of each client certificate whose handshake completed.
type tlsController struct {
	addr  string
	peers chan string
}

func startTLSController(t *testing.T, ca *testcert.CA, dir, ip, name string) *tlsController {
	t.Helper()
	cert, key := ca.Issue(t, dir, "ctl-"+ip, "ctl-"+ip, name)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	ln, err := tls.Listen("tcp", net.JoinHostPort(ip, "0"), &tls.Config{
		Certificates: []tls.Certificate{pair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c := &tlsController{addr: ln.Addr().String(), peers: make(chan string, 8)}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				tc := nc.(*tls.Conn)
				if tc.Handshake() != nil {
					return
				}
				c.peers <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
				var b [1]byte
				nc.Read(b[:]) // until the node closes
			}()
		}
	}()
	return c
}

// With mutual TLS and three controllers, each with a certificate that names
// only itself, the node completes TLS with every one: in its rotation over
// controllers, and with a leader a follower names (prefer). controller, the
// first one's address, names none of the others.
func TestDialVerifiesEachController(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, dir)
	var ctls []*tlsController
	var addrs []string
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		c := startTLSController(t, ca, dir, ip, ip)
		ctls, addrs = append(ctls, c), append(addrs, c.addr)
	}
	cert, key := ca.Issue(t, dir, "n1", "n1", "n1")
	cfg := &conf.Cluster{Controller: addrs[0], Controllers: addrs, TLSCert: cert, TLSKey: key, TLSCA: ca.File}
	r, err := newRotation(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(want int) {
		t.Helper()
		nc, err := r.Dial(context.Background())
		if err != nil {
			t.Fatalf("dial %s: %v", addrs[want], err)
		}
		defer nc.Close()
		if got := nc.RemoteAddr().String(); got != addrs[want] {
			t.Fatalf("dialled %s, want %s", got, addrs[want])
		}
		st := nc.(*tls.Conn).ConnectionState()
		if !st.HandshakeComplete || len(st.VerifiedChains) == 0 || st.PeerCertificates[0].VerifyHostname(addrHost(addrs[want])) != nil {
			t.Fatalf("TLS with %s: handshake complete %v, %d verified chains", addrs[want], st.HandshakeComplete, len(st.VerifiedChains))
		}
		if peer := <-ctls[want].peers; peer != "n1" {
			t.Fatalf("controller %s saw client certificate %q", addrs[want], peer)
		}
	}
	for i := range ctls { // the rotation: each in turn
		dial(i)
	}
	for _, i := range []int{2, 1} { // a follower names the leader
		if !r.prefer(addrs[i]) {
			t.Fatalf("prefer(%s) refused a configured controller", addrs[i])
		}
		dial(i)
	}
}

// A controller whose certificate names another controller is refused:
// the name checked is the host dialled.
func TestDialRefusesAnotherControllersName(t *testing.T) {
	dir := t.TempDir()
	ca := testcert.NewCA(t, dir)
	c := startTLSController(t, ca, dir, "127.0.0.2", "127.0.0.1")
	cert, key := ca.Issue(t, dir, "n1", "n1", "n1")
	r, err := newRotation(&conf.Cluster{Controller: "127.0.0.1:1", Controllers: []string{c.addr}, TLSCert: cert, TLSKey: key, TLSCA: ca.File})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := r.Dial(context.Background())
	if err == nil {
		nc.Close()
		t.Fatal("completed TLS with a controller whose certificate does not name the host dialled")
	}
	var herr x509.HostnameError
	if !errors.As(err, &herr) {
		t.Fatalf("dial: %v, want a certificate name mismatch", err)
	}
}

func addrHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		panic(fmt.Sprint(addr, err))
	}
	return h
}
