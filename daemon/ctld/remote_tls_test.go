package ctld

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/client"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/secret"
	"github.com/sharq-hpc/sharq/internal/testcert"
)

// client_tls: the client port speaks TLS with the cluster's certificate;
// a client that checks it against tls_ca gets through to the credential
// check (as root here: refused there), a plain TCP client gets nothing.
func TestRemoteClientTLS(t *testing.T) {
	m := startMunged(t, "")
	addr := freeAddr(t)
	cert, key := testcert.SelfSigned(t, t.TempDir())
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
	plain.TLS, plain.Timeout = nil, 300*time.Millisecond
	// The connection closes with no answer, as a leader killed while
	// answering does: the client asks again until its timeout.
	if _, err := plain.Call(context.Background(), api.Request{Op: api.OpShares}); !errors.Is(err, client.ErrUnreachable) ||
		!strings.Contains(err.Error(), "reading the answer to shares") {
		t.Fatalf("plain TCP to the TLS port: %v, want ErrUnreachable after no answer", err)
	}
}

// TestTLSKeyReadableByOthersRefused: the controller opens neither its
// client port nor its node port with a TLS key other users could read
// (whoever reads it could serve as the controller); chmod 600 and it does.
func TestTLSKeyReadableByOthersRefused(t *testing.T) {
	cert, key := testcert.SelfSigned(t, t.TempDir())
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	c := &Controller{cfg: &conf.Config{Cluster: conf.Cluster{Listen: "127.0.0.1:0", ClientListen: "127.0.0.1:0",
		ClientTLS: true, TLSCert: cert, TLSKey: key, TLSCA: cert}}}
	for name, listen := range map[string]func() (net.Listener, error){"client port": c.listenClientsTCP, "node port": c.listenNodes} {
		if l, err := listen(); !errors.Is(err, secret.ErrFile) {
			if l != nil {
				l.Close()
			}
			t.Errorf("%s with a world-readable key: %v, want secret.ErrFile", name, err)
		}
	}
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, listen := range map[string]func() (net.Listener, error){"client port": c.listenClientsTCP, "node port": c.listenNodes} {
		l, err := listen()
		if err != nil {
			t.Fatalf("%s with a 0600 key: %v", name, err)
		}
		l.Close()
	}
}
