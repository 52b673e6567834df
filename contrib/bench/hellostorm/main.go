// Command hellostorm is a load tool for a controller's node port: it is
// many nodes at once, each its own mutual-TLS connection from its own
// loopback address with a certificate naming it (issued here from the
// cluster's CA), saying hello with the node secret, beating as sharqd
// does, and reconnecting with sharqd's back-off when the connection
// ends. It prints, for every round in which all of them are welcomed
// (the first start, then after each controller restart or failover), how
// long that took from the round's first disconnect and how many tries
// were refused; and the time from the last welcome of a round to the
// first start order any node gets after it (the first scheduling pass
// that places a job submitted then; -ready tells a script when). contrib/bench/hellostorm.sh runs it against a
// real sharqctld it restarts with kill -9.
//
//	hellostorm -addr 127.0.0.1:6820 -ca ca.pem -ca-key ca.key -secret secret \
//	    -nodes 1000 -prefix g -rounds 2
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6820", "the controller's node address (listen)")
	caFile := flag.String("ca", "", "the cluster CA's certificate (PEM)")
	caKey := flag.String("ca-key", "", "the cluster CA's private key (PEM), to issue the nodes' certificates")
	serverName := flag.String("server-name", "", "the name the controller's certificate must carry (default: the host of -addr)")
	secretFile := flag.String("secret", "", "the node secret file")
	nodes := flag.Int("nodes", 1000, "how many nodes")
	prefix := flag.String("prefix", "g", "node names: PREFIX0001 ...")
	gpus := flag.Int("gpus", 8, "GPUs each node reports")
	rounds := flag.Int("rounds", 2, "rounds of all nodes welcomed to wait for (each after a controller restart)")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long a round may take")
	ready := flag.String("ready", "", "a file written (with the round number) when a round's nodes are all welcomed")
	flag.Parse()
	if err := run(config{*addr, *caFile, *caKey, *serverName, *secretFile, *nodes, *prefix, *gpus, *rounds, *timeout, *ready}); err != nil {
		fmt.Fprintln(os.Stderr, "hellostorm:", err)
		os.Exit(1)
	}
}

type config struct {
	addr, caFile, caKey, serverName, secretFile string
	nodes                                       int
	prefix                                      string
	gpus, rounds                                int
	timeout                                     time.Duration
	ready                                       string
}

// Back-off between tries, as sharqd's (noded.DefaultMinBackoff and its
// maximum).
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 5 * time.Second
	beat       = 5 * time.Second
)

// storm is the shared state of the nodes.
type storm struct {
	cfg       config
	tls       []*tls.Config
	secret    string
	mu        sync.Mutex
	up        int       // nodes welcomed and connected
	lastUp    time.Time // the last welcome
	downAt    time.Time // the first disconnect since the last full round
	refused   atomic.Int64
	started   chan time.Time // the first start order after a round
	startOnce atomic.Bool    // started was sent to in this round
	changed   chan struct{}
}

func run(cfg config) error {
	if cfg.nodes < 1 || cfg.nodes > 60000 {
		return errors.New("-nodes: 1 to 60000")
	}
	secret, err := os.ReadFile(cfg.secretFile)
	if err != nil {
		return err
	}
	ca, key, err := loadCA(cfg.caFile, cfg.caKey)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	name := cfg.serverName
	if name == "" {
		if name, _, err = net.SplitHostPort(cfg.addr); err != nil {
			return err
		}
	}
	s := &storm{cfg: cfg, secret: strings.TrimSpace(string(secret)), started: make(chan time.Time, 1), changed: make(chan struct{}, 1)}
	t0 := time.Now()
	for i := range cfg.nodes {
		pair, err := issue(ca, key, nodeName(cfg.prefix, i))
		if err != nil {
			return err
		}
		s.tls = append(s.tls, &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: name, MinVersion: tls.VersionTLS13})
	}
	fmt.Printf("issued %d node certificates in %v\n", cfg.nodes, time.Since(t0).Round(time.Millisecond))
	begin := time.Now()
	for i := range cfg.nodes {
		go s.node(i)
	}
	for round := 1; round <= cfg.rounds; round++ {
		deadline := time.After(cfg.timeout)
		var last time.Time
		for last.IsZero() {
			// A round after the first begins at the first disconnect
			// after the last one ended (the controller's restart), and
			// ends when every node is welcomed again.
			s.mu.Lock()
			if round > 1 && !s.downAt.IsZero() {
				begin = s.downAt
			}
			if s.up == cfg.nodes && (round == 1 || !s.downAt.IsZero()) {
				last, s.downAt = s.lastUp, time.Time{}
			}
			up := s.up
			s.mu.Unlock()
			if !last.IsZero() {
				break
			}
			select {
			case <-s.changed:
			case <-deadline:
				return fmt.Errorf("round %d: %d of %d nodes welcomed after %v", round, up, cfg.nodes, cfg.timeout)
			}
		}
		fmt.Printf("round %d: %d nodes welcomed %v after the round began; %d tries refused so far\n",
			round, cfg.nodes, last.Sub(begin).Round(time.Millisecond), s.refused.Load())
		// Start orders from here on: for a job submitted once the round's
		// nodes are up (a restored job's order may come before).
		select {
		case <-s.started:
		default:
		}
		s.startOnce.Store(false)
		if cfg.ready != "" {
			if err := os.WriteFile(cfg.ready, []byte(fmt.Sprintln(round)), 0o644); err != nil {
				return err
			}
		}
		select {
		case at := <-s.started:
			fmt.Printf("round %d: first start order %v after the last welcome\n", round, at.Sub(last).Round(time.Millisecond))
		case <-time.After(15 * time.Second):
			fmt.Printf("round %d: no start order within 15s of the last welcome (no job queued)\n", round)
		}
	}
	return nil
}

func (s *storm) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func nodeName(prefix string, i int) string { return fmt.Sprintf("%s%04d", prefix, i+1) }

// node is one node: connect, hello, beat and read until the connection
// ends, then back off and again.
func (s *storm) node(i int) {
	name := nodeName(s.cfg.prefix, i)
	local := &net.TCPAddr{IP: net.IPv4(127, byte(1+i/62500), byte(1+i/250%250), byte(1+i%250))}
	backoff := minBackoff
	for seq := uint64(1); ; {
		d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: local}
		conn, err := tls.DialWithDialer(d, "tcp", s.cfg.addr, s.tls[i])
		if err == nil {
			err = s.session(conn, name, &seq)
		}
		if err != nil {
			s.refused.Add(1)
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, maxBackoff)
		if err == nil {
			backoff = minBackoff
		}
	}
}

// session says hello and, once welcomed, beats and reads orders until the
// connection ends (nil: it was welcomed).
func (s *storm) session(conn net.Conn, name string, seq *uint64) error {
	defer conn.Close()
	dec := api.NewDecoder(conn)
	hello := api.NodeMsg{V: api.NodeVersion, Type: api.MsgHello, Node: name, Secret: s.secret, Seq: *seq,
		Inventory: &api.Inventory{Source: "config", CPUs: 8 * s.cfg.gpus}, Time: time.Now()}
	*seq++
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var w api.NodeMsg
	if err := api.Encode(conn, hello); err != nil {
		return err
	}
	if err := dec.Decode(&w); err != nil {
		return err
	}
	if w.Type != api.MsgWelcome || w.Error != "" {
		return fmt.Errorf("node %s refused: %s", name, w.Error)
	}
	conn.SetDeadline(time.Time{})
	s.mu.Lock()
	s.up++
	s.lastUp = time.Now()
	s.mu.Unlock()
	s.notify()
	defer func() {
		s.mu.Lock()
		s.up--
		if s.downAt.IsZero() {
			s.downAt = time.Now()
		}
		s.mu.Unlock()
		s.notify()
	}()
	var mu sync.Mutex
	done := make(chan struct{})
	defer close(done)
	go func() { // heartbeats, as sharqd sends them
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mu.Lock()
				*seq++
				err := api.Encode(conn, api.NodeMsg{V: api.NodeVersion, Type: api.MsgHeartbeat, Node: name, Seq: *seq, Time: time.Now()})
				mu.Unlock()
				if err != nil {
					conn.Close()
					return
				}
			}
		}
	}()
	for {
		var m api.NodeMsg
		if err := dec.Decode(&m); err != nil {
			return nil
		}
		if m.Type == api.MsgStart && s.startOnce.CompareAndSwap(false, true) {
			select {
			case s.started <- time.Now():
			default:
			}
		}
	}
}

// loadCA reads the CA's certificate and key (PKCS#8, EC or RSA PKCS#1).
func loadCA(certFile, keyFile string) (*x509.Certificate, any, error) {
	cb, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	b, _ := pem.Decode(cb)
	if b == nil {
		return nil, nil, fmt.Errorf("%s: no PEM certificate", certFile)
	}
	ca, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certFile, err)
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	k, _ := pem.Decode(kb)
	if k == nil {
		return nil, nil, fmt.Errorf("%s: no PEM key", keyFile)
	}
	for _, parse := range []func([]byte) (any, error){
		x509.ParsePKCS8PrivateKey,
		func(d []byte) (any, error) { return x509.ParseECPrivateKey(d) },
		func(d []byte) (any, error) { return x509.ParsePKCS1PrivateKey(d) },
	} {
		if key, err := parse(k.Bytes); err == nil {
			return ca, key, nil
		}
	}
	return nil, nil, fmt.Errorf("%s: not a PKCS#8, EC or RSA private key", keyFile)
}

// issue makes a node's certificate: its name as the one DNS SAN (what the
// controller checks), client authentication, a day's validity.
func issue(ca *x509.Certificate, caKey any, name string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("node %s: %w", name, err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
