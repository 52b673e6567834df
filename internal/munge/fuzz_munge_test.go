//go:build !unit

package munge

import (
	"context"
	"errors"
	"os"
	"testing"
)

// FuzzDecode hands arbitrary text to Decode and a real munged: it never
// crashes, never succeeds on what this test's munged did not make, and an
// error is always one of the package's causes.
func FuzzDecode(f *testing.F) {
	d := start(f, "")
	ctx := context.Background()
	valid, err := Encode(ctx, d.Socket, []byte("seed"), 0)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{valid, valid[:len(valid)/2] + ":", "MUNGE::", "MUNGE:" + valid[6:20] + ":", "MUNGE:====:", "", "\x00", "MUNGE:AAAA"} {
		f.Add(s)
	}
	causes := []error{ErrSocket, ErrBadCredential, ErrInvalid, ErrExpired, ErrRewound, ErrReplayed, ErrUnauthorized, ErrBadArg, ErrMunge}
	f.Fuzz(func(t *testing.T, cred string) {
		c, err := Decode(ctx, d.Socket, cred)
		if err == nil {
			if cred != valid || c.UID != uint32(os.Getuid()) || string(c.Payload) != "seed" {
				t.Fatalf("accepted %q as uid %d payload %q", cred, c.UID, c.Payload)
			}
			return
		}
		for _, cause := range causes {
			if errors.Is(err, cause) {
				return
			}
		}
		t.Fatalf("error %v wraps none of the causes", err)
	})
}
