//go:build !unit

package munge

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/internal/munged"
)

// start runs a munged with a fresh key (or key, when given) for t.
func start(t testing.TB, key string) *munged.Daemon { return munged.ForTest(t, key) }

func TestRoundTrip(t *testing.T) {
	d := start(t, "")
	ctx := context.Background()
	tests := []struct {
		name    string
		payload []byte
	}{
		{"empty", nil},
		{"digest", []byte("sharq-request-v1 0123456789abcdef")},
		{"binary", []byte{0, 1, 2, 255, '\n', 0}},
		{"largest", bytes.Repeat([]byte{'x'}, MaxPayload)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now().Add(-time.Second)
			cred, err := Encode(ctx, d.Socket, tt.payload, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(cred, "MUNGE:") || len(cred) > MaxCredential {
				t.Fatalf("credential %q (%d bytes)", cred[:min(len(cred), 40)], len(cred))
			}
			c, err := Decode(ctx, d.Socket, cred)
			if err != nil {
				t.Fatal(err)
			}
			if c.UID != uint32(os.Getuid()) || c.GID != uint32(os.Getgid()) {
				t.Errorf("uid %d gid %d, want %d %d", c.UID, c.GID, os.Getuid(), os.Getgid())
			}
			if !bytes.Equal(c.Payload, tt.payload) {
				t.Errorf("payload %q, want %q", c.Payload, tt.payload)
			}
			if c.Encoded.Before(before) || c.Encoded.After(time.Now().Add(time.Second)) {
				t.Errorf("encoded at %v", c.Encoded)
			}
			if c.TTL != 5*time.Minute {
				t.Errorf("ttl %v, want munged's default 5m", c.TTL)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	d := start(t, "")
	other := start(t, "") // another key
	ctx := context.Background()
	enc := func(sock string, ttl time.Duration) string {
		t.Helper()
		c, err := Encode(ctx, sock, []byte("payload"), ttl)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	replayed := enc(d.Socket, 0)
	if _, err := Decode(ctx, d.Socket, replayed); err != nil {
		t.Fatal(err)
	}
	altered := []byte(enc(d.Socket, 0))
	i := len(altered) / 2
	altered[i] = map[bool]byte{true: 'B', false: 'A'}[altered[i] == 'A']

	tests := []struct {
		name    string
		socket  string
		cred    string
		want    error
		payload bool // the payload comes back with the error
	}{
		{"replayed", d.Socket, replayed, ErrReplayed, true},
		{"other key", d.Socket, enc(other.Socket, 0), ErrInvalid, false},
		{"altered", d.Socket, string(altered), ErrInvalid, false},
		{"no munged", filepath.Join(t.TempDir(), "none.socket"), enc(d.Socket, 0), ErrSocket, false},
		{"not a credential", d.Socket, "hello", ErrBadCredential, false},
		{"empty", d.Socket, "", ErrBadCredential, false},
		{"not base64", d.Socket, "MUNGE:ab\x00cd:", ErrBadCredential, false},
		{"too long", d.Socket, "MUNGE:" + strings.Repeat("A", MaxCredential) + ":", ErrBadCredential, false},
		{"truncated", d.Socket, "MUNGE:AwQFAAA:", ErrBadCredential, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Decode(ctx, tt.socket, tt.cred)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.payload && string(c.Payload) != "payload" {
				t.Errorf("payload %q with %v", c.Payload, err)
			}
		})
	}
}

// A credential outlives its ttl by one second: munged says expired.
func TestExpired(t *testing.T) {
	d := start(t, "")
	ctx := context.Background()
	cred, err := Encode(ctx, d.Socket, []byte("x"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	c, err := Decode(ctx, d.Socket, cred)
	if !errors.Is(err, ErrExpired) {
		t.Fatalf("err = %v, want ErrExpired", err)
	}
	if c.TTL != time.Second {
		t.Errorf("ttl %v", c.TTL)
	}
}

func TestEncodeRefused(t *testing.T) {
	d := start(t, "")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		socket  string
		payload []byte
		ttl     time.Duration
		want    error
	}{
		{"no munged", context.Background(), filepath.Join(t.TempDir(), "x"), nil, 0, ErrSocket},
		{"payload too large", context.Background(), d.Socket, make([]byte, MaxPayload+1), 0, ErrBadArg},
		{"negative ttl", context.Background(), d.Socket, nil, -time.Second, ErrBadArg},
		{"cancelled", cancelled, d.Socket, nil, 0, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Encode(tt.ctx, tt.socket, tt.payload, tt.ttl)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.want == ErrSocket && !strings.Contains(err.Error(), tt.socket) {
				t.Errorf("error %q does not name the socket", err)
			}
		})
	}
}

// Many goroutines encode and decode at once: each context is their own.
func TestConcurrent(t *testing.T) {
	d := start(t, "")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				want := []byte{byte(i), byte(j)}
				cred, err := Encode(ctx, d.Socket, want, 0)
				if err != nil {
					errs <- err
					return
				}
				c, err := Decode(ctx, d.Socket, cred)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(c.Payload, want) {
					errs <- errors.New("payload mixed up between goroutines")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkEncodeDecode(b *testing.B) {
	d := start(b, "")
	ctx := context.Background()
	payload := []byte("sharq-request-v1 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			cred, err := Encode(ctx, d.Socket, payload, 0)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Decode(ctx, d.Socket, cred); err != nil {
				b.Fatal(err)
			}
		}
	})
}
