package conf

import (
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Spool backends ([cluster] spool).
const (
	SpoolBolt = "bbolt" // one local file under spool_dir (one controller)
	SpoolEtcd = "etcd"  // an etcd cluster ([etcd]); two or three controllers
)

// Etcd is the [etcd] table: where the etcd spool and the leader election live.
type Etcd struct {
	Endpoints []string // client URLs: http(s)://host:port
	// Prefix is the key prefix of this cluster's state; by default
	// "/sharq/NAME/".
	Prefix string
	// SessionTTL is the leader's lease: a leader that cannot renew it for
	// this long loses leadership (and a paused one can no longer write).
	SessionTTL time.Duration
	// Timeout bounds each etcd request; a write not committed by then
	// fails and is not acknowledged.
	Timeout time.Duration
	// TLSCert, TLSKey and TLSCA are all set, only TLSCA (server TLS, no
	// client certificate), or all empty.
	TLSCert, TLSKey, TLSCA string
	// MaxTxnOps and MaxRequestBytes are the members' --max-txn-ops and
	// --max-request-bytes.
	MaxTxnOps       int
	MaxRequestBytes int64
}

// Defaults of the [etcd] table.
const (
	DefaultSessionTTL      = 5 * time.Second
	DefaultEtcdTimeout     = 5 * time.Second
	DefaultMaxTxnOps       = 128
	DefaultMaxRequestBytes = 3 << 19 // 1.5 MiB
)

// etcd reads the [etcd] table (t nil when absent) for a cluster with the
// given name; backend is [cluster] spool.
func (l *loader) etcd(t *table, name, backend string) Etcd {
	e := Etcd{SessionTTL: DefaultSessionTTL, Timeout: DefaultEtcdTimeout, MaxTxnOps: DefaultMaxTxnOps,
		MaxRequestBytes: DefaultMaxRequestBytes, Prefix: "/sharq/" + name + "/"}
	if t == nil {
		if backend == SpoolEtcd {
			l.add([]string{"cluster", "spool"}, `spool = "etcd" needs an [etcd] table with endpoints`)
		}
		return e
	}
	if eps, ok := t.strings("endpoints"); ok {
		for _, ep := range eps {
			u, err := url.Parse(ep)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
				t.errf("endpoints", "%q is not an etcd client URL (http://host:port or https://host:port)", ep)
				continue
			}
			e.Endpoints = append(e.Endpoints, ep)
		}
		if len(eps) == 0 {
			t.errf("endpoints", "is empty")
		}
	} else {
		t.errAt("", "endpoints is required")
	}
	if p, ok := t.str("prefix"); ok {
		e.Prefix = p
		if !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || len(p) < 2 || len(p) > 200 {
			t.errf("prefix", "%q must start and end with '/' (at most 200 bytes)", p)
		}
	}
	if d, ok := t.duration("session_ttl", e.SessionTTL); ok {
		e.SessionTTL = d
		if d < time.Second || d > 10*time.Minute || d%time.Second != 0 {
			t.errf("session_ttl", "%v must be whole seconds from 1s to 10m (etcd lease TTLs are seconds)", d)
		}
	}
	if d, ok := t.duration("timeout", e.Timeout); ok {
		e.Timeout = d
		if d < 100*time.Millisecond || d > time.Minute {
			t.errf("timeout", "%v must be from 100ms to 1m", d)
		}
	}
	for _, k := range []struct {
		key string
		dst *string
	}{{"tls_cert", &e.TLSCert}, {"tls_key", &e.TLSKey}, {"tls_ca", &e.TLSCA}} {
		*k.dst = t.strDefault(k.key, "")
		if *k.dst != "" && !filepath.IsAbs(*k.dst) {
			t.errf(k.key, "%q is not an absolute path", *k.dst)
		}
	}
	if (e.TLSCert == "") != (e.TLSKey == "") {
		t.errAt("tls_cert", "tls_cert and tls_key must be set together")
	}
	if e.TLSCert != "" && e.TLSCA == "" {
		t.errAt("tls_cert", "tls_cert needs tls_ca (the CA that signed the etcd members' certificates)")
	}
	if n, ok := t.integer("max_txn_ops"); ok {
		e.MaxTxnOps = n
		if n < 8 || n > 1<<20 {
			t.errf("max_txn_ops", "%d must be from 8 to 1048576", n)
		}
	}
	if n, ok := t.size("max_request_bytes"); ok {
		e.MaxRequestBytes = n
		if n < DefaultMaxRequestBytes || n > 1<<30 { // room for a 1 MiB record and its keys
			t.errf("max_request_bytes", "%d must be from 1.5 MiB to 1 GiB", n)
		}
	}
	t.unknown(keys["etcd"]...)
	return e
}

// TLS reports whether the etcd connection uses TLS.
func (e *Etcd) TLS() bool { return e.TLSCA != "" }
