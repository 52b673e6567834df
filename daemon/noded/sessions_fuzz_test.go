//go:build !unit

package noded

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/internal/munged"
	"github.com/sharq-hpc/sharq/session"
)

// FuzzSessionHello is a client on the session port that sends fuzzed
// bytes, with a token of a MUNGE session granted for each try: without
// that user's credential for that token nothing runs; the node answers
// with one refusal and closes, and never waits past its hello deadline.
func FuzzSessionHello(f *testing.F) {
	md := munged.ForTest(f, "")
	tok := strings.Repeat("a", session.TokenLen)
	frames := func(write func(w *session.Writer)) []byte {
		var b bytes.Buffer
		write(session.NewWriter(&b))
		return b.Bytes()
	}
	f.Add(frames(func(w *session.Writer) { w.JSON(session.TypeHello, session.Hello{V: session.Version, Token: tok}) }))
	f.Add(frames(func(w *session.Writer) {
		w.JSON(session.TypeHello, session.Hello{V: session.Version, Token: tok, Munge: "MUNGE:AAAA:", Term: "xterm", Rows: 24, Cols: 80})
		w.Resize(1, 1)
		w.Data(session.TypeStdin, []byte("id\n"))
	}))
	f.Add(frames(func(w *session.Writer) { w.Frame(session.TypeHello, []byte(`{"v":1,"token":"`+tok+`","uid":0}`)) }))
	f.Add(frames(func(w *session.Writer) { w.Data(session.TypeStdin, []byte("id\n")) }))
	f.Add([]byte{byte(session.TypeHello), 0xff, 0xff, 0xff, 0xff})
	s := newSessions(nil, nil, md.Socket, slog.New(slog.DiscardHandler))
	s.wait = time.Millisecond
	f.Fuzz(func(t *testing.T, in []byte) {
		s.grant(&api.SessionOrder{Token: tok, JobID: "1.t", UID: 1000, Munge: true, Expires: time.Now().Add(time.Minute)})
		client, server := net.Pipe()
		defer client.Close()
		done := make(chan struct{})
		go func() { defer close(done); s.handle(context.Background(), server) }()
		go func() { client.Write(in); client.Write(make([]byte, session.MaxPayload+5)) }() // then a stream of nothing but zeros
		client.SetReadDeadline(time.Now().Add(helloWait + time.Minute))
		fr, err := session.ReadFrame(client)
		if err != nil || fr.Type != session.TypeRefused {
			t.Fatalf("%q: got frame %d %q (%v), want a refusal", in, fr.Type, fr.Payload, err)
		}
		select {
		case <-done:
		case <-time.After(helloWait + time.Minute):
			t.Fatalf("%q: the node still holds the connection after its refusal", in)
		}
		if n, _ := io.Copy(io.Discard, client); n != 0 {
			t.Fatalf("%q: %d bytes after the refusal", in, n)
		}
	})
}
