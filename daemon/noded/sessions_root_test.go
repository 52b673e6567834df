//go:build !unit

package noded

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munge"
	"github.com/sharq-hpc/sharq/internal/munged"
	"github.com/sharq-hpc/sharq/session"
)

// TestSessionRefusals: whatever a client sends before a session exists,
// the node answers with a refusal and runs nothing: a first frame that is
// no hello, a malformed hello, an unknown, used or expired token, and for a
// token issued to a MUNGE-authenticated client a missing, invalid or other
// user's credential. A refused credential leaves the token to its owner:
// one who learnt a token cannot burn it (the node once used it up before
// it checked the credential).
func TestSessionRefusals(t *testing.T) {
	md := munged.ForTest(t, "")
	rootCred := func(token string) string {
		c, err := munge.Encode(context.Background(), md.Socket, session.CredentialPayload(token), 0)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s := newSessions(nil, nil, md.Socket, slog.New(slog.DiscardHandler))
	s.wait = 50 * time.Millisecond
	tok := func(c byte) string { return strings.Repeat(string(c), session.TokenLen) }
	future := time.Now().Add(time.Minute)
	s.grant(&api.SessionOrder{Token: tok('a'), JobID: "1.t", UID: 1000, Munge: true, Expires: future})
	s.grant(&api.SessionOrder{Token: tok('b'), JobID: "1.t", UID: 1000, Munge: true, Expires: future})
	s.grant(&api.SessionOrder{Token: tok('c'), JobID: "1.t", UID: 1000, Munge: true, Expires: future})
	s.grant(&api.SessionOrder{Token: tok('d'), JobID: "1.t", UID: 1000, Expires: time.Now().Add(-time.Second)})
	s.grant(&api.SessionOrder{Token: tok('e'), JobID: "1.t", UID: 0, Munge: true, Expires: future}) // root's own, but for another token
	s.grant(&api.SessionOrder{Token: "short", JobID: "1.t", UID: 1000, Expires: future})            // dropped
	s.grant(&api.SessionOrder{Token: tok('f'), JobID: "../x", UID: 1000, Expires: future})          // dropped
	s.grant(&api.SessionOrder{Token: tok('g'), JobID: "1.t", UID: 1000, Expires: future})
	if g := s.tokens[tok('g')]; !s.use(tok('g'), g) || s.use(tok('g'), g) { // a session took it
		t.Fatal("a token is used once")
	}

	hello := func(h session.Hello) func(w *session.Writer) {
		return func(w *session.Writer) { w.JSON(session.TypeHello, h) }
	}
	for _, tc := range []struct {
		name string
		send func(w *session.Writer)
		want string
	}{
		{"data first", func(w *session.Writer) { w.Data(session.TypeStdin, []byte("id\n")) }, "the first frame must be a hello"},
		{"unknown field", func(w *session.Writer) { w.Frame(session.TypeHello, []byte(`{"v":1,"uid":0}`)) }, "unknown field"},
		{"version", hello(session.Hello{V: 9, Token: tok('a')}), "protocol version 9"},
		{"unknown token", hello(session.Hello{V: session.Version, Token: tok('z')}), "unknown, used or expired"},
		{"malformed order dropped", hello(session.Hello{V: session.Version, Token: tok('f')}), "unknown, used or expired"},
		{"expired token", hello(session.Hello{V: session.Version, Token: tok('d')}), "unknown, used or expired"},
		{"no credential", hello(session.Hello{V: session.Version, Token: tok('a')}), "needs a MUNGE credential"},
		{"used token", hello(session.Hello{V: session.Version, Token: tok('g')}), "unknown, used or expired"},
		{"bad credential", hello(session.Hello{V: session.Version, Token: tok('b'), Munge: "MUNGE:garbage:"}), "MUNGE credential refused"},
		{"bad credential again: the token is still there", hello(session.Hello{V: session.Version, Token: tok('b'), Munge: "MUNGE:garbage:"}), "MUNGE credential refused"},
		{"another user's credential", hello(session.Hello{V: session.Version, Token: tok('c'), Munge: rootCred(tok('c'))}), "not the session owner's"},
		{"credential for another token", hello(session.Hello{V: session.Version, Token: tok('e'), Munge: rootCred(tok('x'))}), "not the session owner's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			done := make(chan struct{})
			go func() { defer close(done); s.handle(context.Background(), server) }()
			go tc.send(session.NewWriter(client))
			client.SetReadDeadline(time.Now().Add(time.Minute))
			f, err := session.ReadFrame(client)
			if err != nil {
				t.Fatal(err)
			}
			if f.Type != session.TypeRefused || !strings.Contains(string(f.Payload), tc.want) {
				t.Fatalf("frame %d %q, want a refusal with %q", f.Type, f.Payload, tc.want)
			}
			<-done
		})
	}
	for _, c := range "abce" {
		if s.tokens[tok(byte(c))] == nil {
			t.Errorf("token %c used up by a connection that did not show its owner's credential", c)
		}
	}
	if len(s.tokens) != 4 {
		t.Errorf("%d tokens left, want the 4 whose credentials were refused", len(s.tokens))
	}
}
