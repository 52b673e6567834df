//go:build !unit

package munge

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/internal/munged"
)

// unmunge decodes cred with MUNGE's own command (libmunge) at socket and
// returns its metadata (numeric) and the payload.
func unmunge(t *testing.T, socket, cred string) (map[string]string, []byte) {
	t.Helper()
	dir := t.TempDir()
	meta, payload := filepath.Join(dir, "meta"), filepath.Join(dir, "payload")
	cmd := exec.Command("unmunge", "-S", socket, "-N", "-m", meta, "-o", payload)
	cmd.Stdin = strings.NewReader(cred)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unmunge: %v: %s", err, out)
	}
	m, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(m), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	p, err := os.ReadFile(payload)
	if err != nil {
		t.Fatal(err)
	}
	return fields, p
}

// mungeCLI makes a credential with MUNGE's own command at socket.
func mungeCLI(t *testing.T, socket string, payload []byte, args ...string) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "payload")
	if err := os.WriteFile(in, payload, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("munge", append([]string{"-S", socket, "-i", in}, args...)...).Output()
	if err != nil {
		t.Fatalf("munge %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// Credentials made here decode with libmunge's unmunge, and libmunge's
// decode here, with the same uid, gid, payload and ttl.
func TestInterop(t *testing.T) {
	d := start(t, "")
	ctx := context.Background()
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	tests := []struct {
		name    string
		payload []byte
		ttl     time.Duration
		args    []string // of the munge command
	}{
		{"empty", nil, 0, nil},
		{"digest", []byte("sharq-request-v1 sha256:0123456789abcdef"), 0, nil},
		{"binary", []byte{0, 1, 2, 255, '\n', 0}, 90 * time.Second, []string{"-t", "90"}},
		{"largest", bytes.Repeat([]byte("0123456789abcdef"), MaxPayload/16), 0, nil},
		{"compressed", bytes.Repeat([]byte{'z'}, MaxPayload), 0, []string{"-z", "zlib"}},
		{"no cipher", []byte("clear"), 0, []string{"-c", "none"}},
		{"sha512 mac", []byte("mac"), 0, []string{"-m", "sha512"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/go to unmunge", func(t *testing.T) {
			cred, err := Encode(ctx, d.Socket, tt.payload, tt.ttl)
			if err != nil {
				t.Fatal(err)
			}
			meta, payload := unmunge(t, d.Socket, cred)
			if meta["STATUS"] != "0" || meta["UID"] != uid || meta["GID"] != gid {
				t.Errorf("unmunge says %v, want status 0 uid %s gid %s", meta, uid, gid)
			}
			wantTTL := tt.ttl
			if wantTTL == 0 {
				wantTTL = 5 * time.Minute
			}
			if meta["TTL"] != strconv.Itoa(int(wantTTL/time.Second)) {
				t.Errorf("ttl %s, want %v", meta["TTL"], wantTTL)
			}
			if !bytes.Equal(payload, tt.payload) {
				t.Errorf("payload %q, want %q", payload, tt.payload)
			}
		})
		t.Run(tt.name+"/munge to go", func(t *testing.T) {
			cred := mungeCLI(t, d.Socket, tt.payload, tt.args...)
			c, err := Decode(ctx, d.Socket, cred)
			if err != nil {
				t.Fatal(err)
			}
			if strconv.Itoa(int(c.UID)) != uid || strconv.Itoa(int(c.GID)) != gid {
				t.Errorf("uid %d gid %d, want %s %s", c.UID, c.GID, uid, gid)
			}
			if !bytes.Equal(c.Payload, tt.payload) {
				t.Errorf("payload %q, want %q", c.Payload, tt.payload)
			}
			want := tt.ttl
			if want == 0 {
				want = 5 * time.Minute
			}
			if c.TTL != want {
				t.Errorf("ttl %v, want %v", c.TTL, want)
			}
			if time.Since(c.Encoded) > time.Minute || time.Until(c.Encoded) > time.Second {
				t.Errorf("encoded at %v", c.Encoded)
			}
		})
	}
}

// fakeTime is libfaketime's library for threaded programs (Debian's
// faketime package), which shifts a munged's clock.
const fakeTime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"

// shifted starts a munged with key whose clock is off by offset
// (libfaketime's syntax, "+600" seconds).
func shifted(t *testing.T, key, offset string) *munged.Daemon {
	t.Helper()
	if _, err := os.Stat(fakeTime); err != nil {
		t.Fatalf("%v: install Debian's faketime (contrib/local/install-deps.sh --test)", err)
	}
	d, err := munged.Start(context.Background(), filepath.Join(t.TempDir(), "m"), key,
		"LD_PRELOAD="+fakeTime, "FAKETIME="+offset, "FAKETIME_DONT_RESET=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d
}

// munged's refusals, for credentials from libmunge's munge command and
// from Encode alike: each is its sentinel, with who made it and when on
// expired, rewound and replayed (what munged sends back then), and
// nothing on the others.
func TestRefusedByMunged(t *testing.T) {
	d := start(t, "")
	future := shifted(t, d.Key, "+600") // the same key, 10 minutes ahead
	other := start(t, "")
	ctx := context.Background()
	mine := uint32(os.Getuid())
	type maker func(t *testing.T, socket string, payload []byte, ttl int) string
	makers := map[string]maker{
		"go": func(t *testing.T, socket string, payload []byte, ttl int) string {
			c, err := Encode(ctx, socket, payload, time.Duration(ttl)*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		"munge": func(t *testing.T, socket string, payload []byte, ttl int) string {
			return mungeCLI(t, socket, payload, "-t", strconv.Itoa(ttl))
		},
	}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			replayed := mk(t, d.Socket, []byte("payload"), 60)
			if _, err := Decode(ctx, d.Socket, replayed); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name   string
				cred   string
				socket string // the decoder
				want   error
				filled bool // uid and payload come back with the error
			}{
				{"replayed", replayed, d.Socket, ErrReplayed, true},
				{"expired", mk(t, d.Socket, []byte("payload"), 60), future.Socket, ErrExpired, true},
				{"rewound", mk(t, future.Socket, []byte("payload"), 60), d.Socket, ErrRewound, true},
				{"another key", mk(t, other.Socket, []byte("payload"), 60), d.Socket, ErrInvalid, false},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					c, err := Decode(ctx, tt.socket, tt.cred)
					if !errors.Is(err, tt.want) {
						t.Fatalf("err = %v, want %v", err, tt.want)
					}
					if tt.filled {
						if c.UID != mine || string(c.Payload) != "payload" || c.TTL != time.Minute || c.Encoded.IsZero() {
							t.Errorf("credential %+v with %v", c, err)
						}
					} else if c.UID != 0 || c.Payload != nil {
						t.Errorf("credential %+v with %v: nothing was authenticated", c, err)
					}
				})
			}
		})
	}
	// Restricted to another uid by its maker: munged will not decode it
	// for this process.
	t.Run("unauthorized", func(t *testing.T) {
		cred := mungeCLI(t, d.Socket, []byte("x"), "-u", strconv.Itoa(os.Getuid()+4242))
		if _, err := Decode(ctx, d.Socket, cred); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("err = %v, want ErrUnauthorized", err)
		}
	})
}

// A munged that has gone away: a clear ErrSocket that names the socket,
// whether munged removed its socket or left it behind.
func TestMungedDown(t *testing.T) {
	ctx := context.Background()
	d, err := munged.Start(ctx, filepath.Join(t.TempDir(), "m"), keyFile(t))
	if err != nil {
		t.Fatal(err)
	}
	cred, err := Encode(ctx, d.Socket, []byte("x"), 0)
	if err != nil {
		t.Fatal(err)
	}
	d.Stop()
	stale := filepath.Join(t.TempDir(), "stale.socket")
	if err := listenAndClose(stale); err != nil {
		t.Fatal(err)
	}
	notSocket := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notSocket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, socket, says string
	}{
		{"stopped", d.Socket, "is munged running?"},
		{"stale socket", stale, "connection refused"},
		{"not a socket", notSocket, "is not a socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Encode(ctx, tt.socket, []byte("x"), 0)
			_, derr := Decode(ctx, tt.socket, cred)
			for _, err := range []error{err, derr} {
				if !errors.Is(err, ErrSocket) || !strings.Contains(err.Error(), tt.socket) || !strings.Contains(err.Error(), tt.says) {
					t.Errorf("err = %v, want ErrSocket naming %s and saying %q", err, tt.socket, tt.says)
				}
			}
		})
	}
}

func keyFile(t *testing.T) string {
	t.Helper()
	k := filepath.Join(t.TempDir(), "munge.key")
	if err := munged.NewKey(k); err != nil {
		t.Fatal(err)
	}
	return k
}
