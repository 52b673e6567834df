//go:build !unit

package ctld

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/client"
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
