package munge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// appendEncodeReply and appendDecodeReply make the bodies munged sends
// (for the fake servers here and the fuzz target's round trip).
func appendEncodeReply(b []byte, r encodeReply) []byte {
	b = appendStatus(b, r.status)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.cred)+1))
	b = append(b, r.cred...)
	return append(b, 0)
}

func appendDecodeReply(b []byte, r decodeReply) []byte {
	b = appendStatus(b, r.status)
	b = append(b, r.cipher, r.mac, r.zip, uint8(len(r.realm)))
	b = append(b, r.realm...)
	b = binary.BigEndian.AppendUint32(b, r.ttl)
	b = append(b, uint8(len(r.address)))
	b = append(b, r.address...)
	b = binary.BigEndian.AppendUint32(b, r.encoded)
	b = binary.BigEndian.AppendUint32(b, r.encoded+1)
	b = binary.BigEndian.AppendUint32(b, r.uid)
	b = binary.BigEndian.AppendUint32(b, r.gid)
	b = binary.BigEndian.AppendUint32(b, anyID)
	b = binary.BigEndian.AppendUint32(b, anyID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.payload)))
	return append(b, r.payload...)
}

func appendStatus(b []byte, s status) []byte {
	if s.msg == "" {
		return append(b, s.code, 0)
	}
	b = append(b, s.code, uint8(len(s.msg)+1))
	b = append(b, s.msg...)
	return append(b, 0)
}

// message is a header of type typ and body.
func message(typ uint8, body []byte) []byte {
	return append(header{typ: typ, length: uint32(len(body))}.append(nil), body...)
}

// fake is a server at a Unix socket that is not munged: each connection
// reads one request and answers what reply says.
type fake struct {
	socket string
	mu     sync.Mutex
	reqs   []header // the requests' headers, in order
}

func newFake(t *testing.T, reply func(ctx context.Context, c net.Conn, req header)) *fake {
	t.Helper()
	f := &fake{socket: filepath.Join(t.TempDir(), "fake.socket")}
	l, err := net.Listen("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				stop := context.AfterFunc(ctx, func() { c.Close() })
				defer stop()
				var hb [headerSize]byte
				if _, err := io.ReadFull(c, hb[:]); err != nil {
					return
				}
				h := header{typ: hb[5], retry: hb[6], length: binary.BigEndian.Uint32(hb[7:])}
				if binary.BigEndian.Uint32(hb[:4]) != msgMagic || hb[4] != msgVersion || h.length > 1<<20 {
					t.Errorf("request header % x", hb)
					return
				}
				if _, err := io.CopyN(io.Discard, c, int64(h.length)); err != nil {
					return
				}
				f.mu.Lock()
				f.reqs = append(f.reqs, h)
				f.mu.Unlock()
				reply(ctx, c, h)
			}()
		}
	}()
	return f
}

func (f *fake) requests() []header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]header(nil), f.reqs...)
}

// listenAndClose leaves a socket file nobody listens on (a munged killed
// with -9 leaves one).
func listenAndClose(path string) error {
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	return l.Close()
}

// What answers on the socket is not a well-behaved munged: every case
// ends in a clean error (no hang, no panic, nothing large allocated),
// retried as libmunge does when retrying can help and not when it cannot.
func TestHostileServer(t *testing.T) {
	valid := "MUNGE:AwQFAAA=:"
	send := func(b []byte) func(context.Context, net.Conn, header) {
		return func(_ context.Context, c net.Conn, _ header) { _, _ = c.Write(b) }
	}
	hold := func(ctx context.Context, c net.Conn, _ header) { <-ctx.Done() }
	trickle := func(ctx context.Context, c net.Conn, h header) {
		// A valid reply, one byte every 20ms: the client's deadline
		// ends it, not the bytes.
		for _, b := range message(h.typ+1, appendDecodeReply(nil, decodeReply{})) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
		}
	}
	huge := header{typ: msgDecRsp, length: 0xFFFFFFFF}.append(nil)
	overrun := message(msgDecRsp, appendDecodeReply(nil, decodeReply{}))
	overrun = append(overrun[:len(overrun)-4], 0x7F, 0xFF, 0xFF, 0xFF) // payload length past the body
	tests := []struct {
		name     string
		reply    func(context.Context, net.Conn, header)
		timeout  time.Duration // of the caller's ctx; 0: none
		want     []error
		says     string
		attempts int // requests the server sees
	}{
		{"closes at once", func(context.Context, net.Conn, header) {}, 0, []error{ErrSocket}, "EOF", retryAttempts},
		{"garbage", send([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")), 0, []error{ErrSocket}, "magic", retryAttempts},
		{"another version", send(append(binary.BigEndian.AppendUint32(nil, msgMagic), 3, msgDecRsp, 0, 0, 0, 0, 0)), 0, []error{ErrSocket}, "version 3", retryAttempts},
		{"wrong type", send(message(msgEncRsp, appendEncodeReply(nil, encodeReply{cred: valid}))), 0, []error{ErrSocket}, "type 3", retryAttempts},
		{"huge length", send(huge), 0, []error{ErrSocket}, "at most 65536", 1},
		{"short header", send(huge[: headerSize-4 : headerSize-4]), 0, []error{ErrSocket}, "header", retryAttempts},
		{"field past the body", send(overrun), 0, []error{ErrSocket}, "where", retryAttempts},
		{"bytes left over", send(message(msgDecRsp, append(appendDecodeReply(nil, decodeReply{}), 1, 2))), 0, []error{ErrSocket}, "after the last field", retryAttempts},
		{"address too long", send(message(msgDecRsp, appendDecodeReply(nil, decodeReply{address: make([]byte, 16)}))), 0, []error{ErrSocket}, "address of 16", retryAttempts},
		{"unknown error number", send(message(msgDecRsp, appendDecodeReply(nil, decodeReply{status: status{code: 99}}))), 0, []error{ErrMunge}, "unknown error 99", 1},
		{"control bytes in the message", send(message(msgDecRsp, appendDecodeReply(nil, decodeReply{status: status{code: codeInvalid, msg: "bad\x1b[2J\nkey"}}))), 0, []error{ErrInvalid}, "bad?[2J?key", 1},
		{"never answers", hold, 300 * time.Millisecond, []error{ErrSocket, context.DeadlineExceeded}, "deadline", 1},
		{"slow bytes", trickle, 300 * time.Millisecond, []error{ErrSocket, context.DeadlineExceeded}, "deadline", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.reply)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			_, err := Decode(ctx, f.socket, valid)
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("err = %v, want %v", err, w)
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want it to say %q", err, tt.says)
			}
			reqs := f.requests()
			if len(reqs) != tt.attempts {
				t.Errorf("%d requests, want %d", len(reqs), tt.attempts)
			}
			for i, h := range reqs {
				if h.typ != msgDecReq || int(h.retry) != i {
					t.Errorf("request %d: type %d retry %d, want %d %d", i, h.typ, h.retry, msgDecReq, i)
				}
			}
		})
	}
}

// A reply that claims 4 GiB is refused from its header: Decode allocates
// no more than a few kilobytes for it.
func TestHugeReplyAllocatesNothing(t *testing.T) {
	f := newFake(t, func(_ context.Context, c net.Conn, _ header) {
		_, _ = c.Write(header{typ: msgDecRsp, length: 0xFFFFFFF0}.append(nil))
		_, _ = c.Write(bytes.Repeat([]byte{0xAA}, 1<<16))
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode(context.Background(), f.socket, "MUNGE:AwQFAAA=:")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrSocket) {
		t.Fatalf("err = %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("%d bytes allocated for a refused reply", n)
	}
}

// A fake that answers well-formed replies: Decode takes what they say (the
// socket is trusted as munged's), Encode checks that the credential looks
// like one, and a cancelled caller returns at once.
func TestFakeAnswers(t *testing.T) {
	dec := newFake(t, func(_ context.Context, c net.Conn, _ header) {
		_, _ = c.Write(message(msgDecRsp, appendDecodeReply(nil, decodeReply{
			status: status{code: codeExpired}, ttl: 60, encoded: 1700000000, uid: 1234, gid: 99, payload: []byte("p"),
		})))
	})
	c, err := Decode(context.Background(), dec.socket, "MUNGE:AwQFAAA=:")
	if !errors.Is(err, ErrExpired) || !strings.Contains(err.Error(), "Expired credential") {
		t.Fatalf("err = %v, want ErrExpired with munge_strerror's text", err)
	}
	want := Credential{UID: 1234, GID: 99, Payload: []byte("p"), Encoded: time.Unix(1700000000, 0), TTL: time.Minute}
	if c.UID != want.UID || c.GID != want.GID || !bytes.Equal(c.Payload, want.Payload) || !c.Encoded.Equal(want.Encoded) || c.TTL != want.TTL {
		t.Errorf("credential %+v, want %+v", c, want)
	}

	for _, tt := range []struct {
		name, cred string
		want       error
	}{
		{"a credential", "MUNGE:AwQFAAA=:", nil},
		{"not a credential", "hello", ErrSocket},
		{"not base64", "MUNGE:a b:", ErrSocket},
	} {
		t.Run(tt.name, func(t *testing.T) {
			enc := newFake(t, func(_ context.Context, c net.Conn, _ header) {
				_, _ = c.Write(message(msgEncRsp, appendEncodeReply(nil, encodeReply{cred: tt.cred})))
			})
			got, err := Encode(context.Background(), enc.socket, []byte("x"), 0)
			if !errors.Is(err, tt.want) || (err == nil && got != tt.cred) {
				t.Fatalf("Encode = %q, %v; want %q, %v", got, err, tt.cred, tt.want)
			}
		})
	}

	t.Run("cancelled while waiting", func(t *testing.T) {
		f := newFake(t, func(ctx context.Context, _ net.Conn, _ header) { <-ctx.Done() })
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := Encode(ctx, f.socket, []byte("x"), 0)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrSocket) {
			t.Fatalf("err = %v, want context.Canceled and ErrSocket", err)
		}
	})
}
