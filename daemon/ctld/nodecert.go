package ctld

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/sharq-hpc/sharq/api"
)

// peerCert is the leaf certificate a node presented on a mutual-TLS
// connection, once the handshake has verified it against tls_ca; nil for
// a connection without TLS (the secret alone then says who may connect,
// not which node it is).
func peerCert(conn net.Conn) (leaf *x509.Certificate, isTLS bool) {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil, false
	}
	if st := tc.ConnectionState(); len(st.PeerCertificates) > 0 {
		return st.PeerCertificates[0], true
	}
	return nil, true
}

// checkNodeCert refuses a hello as node over TLS unless the certificate
// names it. The rule (SECURITY.md, "Node identity"): a subject alternative
// name equal to the node's name as the configuration writes it: a DNS name
// (case-insensitive) or, for a node named by an
// IP address, that IP address. A wildcard does not name a node (one
// certificate for *.cluster would name every node, the very thing this
// check catches), and neither does the subject's common name (Go's
// host-name verification ignores it too; the session port's clients check
// the same SANs).
func checkNodeCert(isTLS bool, leaf *x509.Certificate, node string) error {
	if !isTLS {
		return nil
	}
	if leaf == nil {
		return &refusal{api.RefusedCert, fmt.Sprintf("node %q presented no certificate", node)}
	}
	if !certNamesNode(leaf, node) {
		return &refusal{api.RefusedCert, fmt.Sprintf("the node's certificate names %v, not node %q", certNames(leaf), node)}
	}
	return nil
}

// certNamesNode reports whether c names node exactly (see checkNodeCert).
func certNamesNode(c *x509.Certificate, node string) bool {
	if node == "" || c.VerifyHostname(node) != nil {
		return false
	}
	if net.ParseIP(node) != nil {
		return true // VerifyHostname matched an IP SAN
	}
	for _, d := range c.DNSNames {
		if strings.EqualFold(d, node) {
			return true
		}
	}
	return false // only a wildcard matched
}

// certNames lists what c names, for logs and refusals: its DNS and IP
// SANs, then its common name as "CN=...". Bounded: a certificate the CA
// signed may still carry many names.
func certNames(c *x509.Certificate) []string {
	const most = 8
	out := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	if c.Subject.CommonName != "" {
		out = append(out, "CN="+c.Subject.CommonName)
	}
	if len(out) > most {
		out = append(out[:most:most], fmt.Sprintf("(%d more)", len(out)-most))
	}
	for i, s := range out {
		if len(s) > 128 {
			out[i] = s[:128] + "..."
		}
	}
	return out
}
