//go:build !unit

package ctld

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// FuzzRemoteIdentity feeds arbitrary credential and request lines to the
// TCP client port's check, with a real munged behind it: it never panics,
// every refusal is CodeAuth, and it accepts nothing but the one credential
// the test made, for its own request, once.
func FuzzRemoteIdentity(f *testing.F) {
	m := startMunged(f, "")
	req := line(f, api.Request{V: api.Version, Op: api.OpShares})
	cred := line(f, api.Credential{V: api.Version, Munge: credentialAs(f, m.Socket, remoteUID, api.RequestPayload(req), 300)})
	f.Add(cred, req)
	f.Add(cred, append([]byte{' '}, req...))
	f.Add([]byte(`{"v":1,"munge":"MUNGE::"}`+"\n"), req)
	f.Add([]byte(`{"v":1}`), req)
	f.Add([]byte("not json\n"), []byte("{}\n"))
	c := &Controller{cfg: &conf.Config{Cluster: conf.Cluster{MungeSocket: m.Socket}}, now: time.Now,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c.snap.Store(c.cfg) // as installConfig does: the connection goroutines read it
	accepted := false
	f.Fuzz(func(t *testing.T, credLine, reqLine []byte) {
		id, aerr := c.remoteIdentity(context.Background(), credLine, reqLine)
		if aerr != nil {
			if aerr.Code != api.CodeAuth {
				t.Fatalf("refusal %+v is not %s", aerr, api.CodeAuth)
			}
			return
		}
		if accepted || !bytes.Equal(credLine, cred) || !bytes.Equal(reqLine, req) || id.UID != remoteUID {
			t.Fatalf("accepted uid %d for %q / %q", id.UID, credLine, reqLine)
		}
		accepted = true
	})
}
