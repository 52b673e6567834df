package ctld

import (
	"errors"
	"net"
	"os"
	"testing"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/internal/secret"
	"github.com/sharq-hpc/sharq/internal/testcert"
)

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
