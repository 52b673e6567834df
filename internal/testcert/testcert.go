package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// SelfSigned writes dir/cert.pem and dir/key.pem: a certificate for
// 127.0.0.1 and the given extra names (IP literals become IP SANs, others
// DNS SANs), valid an hour either side of now, for server and client
// authentication, that is its own CA (so cert.pem also serves as the CA
// file). One host that is both the controller and node n1 uses
// SelfSigned(tb, dir, "n1").
func SelfSigned(tb testing.TB, dir string, names ...string) (cert, key string) {
	tb.Helper()
	k := newKey(tb)
	tmpl := template(tb, "ctl", append([]string{"127.0.0.1"}, names...))
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage |= x509.KeyUsageCertSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		tb.Fatal(err)
	}
	return write(tb, dir, "cert", der, k)
}

// CA is a test certificate authority that issues certificates for hosts.
type CA struct {
	// File is the CA certificate in PEM (a tls_ca).
	File string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA writes dir/ca.pem, a CA certificate valid an hour either side of
// now.
func NewCA(tb testing.TB, dir string) *CA {
	tb.Helper()
	k := newKey(tb)
	tmpl := template(tb, "sharq test CA", nil)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageCertSign, nil
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	file := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		tb.Fatal(err)
	}
	return &CA{File: file, cert: c, key: k}
}

// Issue writes dir/base.pem and dir/base-key.pem: a certificate the CA
// signed for server and client authentication whose common name is cn
// and whose subject alternative names are names (IP literals become IP
// SANs, others DNS SANs; none: a certificate that names no host).
func (ca *CA) Issue(tb testing.TB, dir, base, cn string, names ...string) (cert, key string) {
	tb.Helper()
	k := newKey(tb)
	der, err := x509.CreateCertificate(rand.Reader, template(tb, cn, names), ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	return write(tb, dir, base, der, k)
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// template is a leaf valid an hour either side of now for names.
func template(tb testing.TB, cn string, names []string) *x509.Certificate {
	tb.Helper()
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		tb.Fatal(err)
	}
	t := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			t.IPAddresses = append(t.IPAddresses, ip)
		} else {
			t.DNSNames = append(t.DNSNames, n)
		}
	}
	return t
}

// write stores a certificate and its key as dir/base.pem and
// dir/base-key.pem ("cert": cert.pem and key.pem, SelfSigned's names).
func write(tb testing.TB, dir, base string, der []byte, k *ecdsa.PrivateKey) (cert, key string) {
	tb.Helper()
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		tb.Fatal(err)
	}
	cert, key = filepath.Join(dir, base+".pem"), filepath.Join(dir, base+"-key.pem")
	if base == "cert" {
		key = filepath.Join(dir, "key.pem")
	}
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return cert, key
}
