package ctld

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sharq/api"
	"sharq/client"
)

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 (its own
// CA) and its key into dir.
func writeSelfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ctl"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// client_tls: the client port speaks TLS with the cluster's certificate;
// a client that checks it against tls_ca gets through to the credential
// check (as root here: refused there), a plain TCP client gets nothing.
func TestRemoteClientTLS(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	cert, key := writeSelfSigned(t, t.TempDir())
	newTestClusterWith(t, []string{"n1:8"}, twoShares, strings.Join([]string{
		`client_listen = "` + addr + `"`, `munge_socket = "` + m.Socket + `"`, "client_tls = true",
		`tls_cert = "` + cert + `"`, `tls_key = "` + key + `"`, `tls_ca = "` + cert + `"`}, "\n"))
	env := map[string]string{"SHARQ_SERVER": addr, "SHARQ_MUNGE_SOCKET": m.Socket, "SHARQ_TLS_CA": cert,
		"SHARQ_CONF": filepath.Join(t.TempDir(), "none.toml")}
	target, err := client.Locate(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, err = target.Call(context.Background(), api.Request{Op: api.OpShares})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeAuth || !strings.Contains(ae.Message, "root is refused") {
		t.Fatalf("over TLS: %v, want the credential check's refusal of root", err)
	}
	plain := target
	plain.TLS = nil
	if _, err := plain.Call(context.Background(), api.Request{Op: api.OpShares}); !errors.Is(err, client.ErrProtocol) {
		t.Fatalf("plain TCP to the TLS port: %v, want ErrProtocol", err)
	}
}
