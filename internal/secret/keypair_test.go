//go:build !unit

package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/internal/testcert"
)

// TestKeyPair: a TLS key other users could read is refused; a key only
// root (and, root-owned, its group) can read loads.
func TestKeyPair(t *testing.T) {
	cases := []struct {
		name    string
		mode    os.FileMode
		uid     int
		wantErr string
	}{
		{name: "root 0600", mode: 0o600},
		{name: "root 0400", mode: 0o400},
		{name: "root 0640: a group of root's choosing reads it", mode: 0o640},
		{name: "world readable", mode: 0o644, wantErr: "other users must have no access"},
		{name: "group writable", mode: 0o660, wantErr: "other users must have no access"},
		{name: "another user's 0600", mode: 0o600, uid: 1000, wantErr: "owned by uid 1000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cert, key := testcert.SelfSigned(t, dir)
			if err := os.Chmod(key, c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(key, c.uid, c.uid); err != nil {
				t.Fatal(err)
			}
			pair, err := KeyPair(cert, key)
			if c.wantErr != "" {
				if !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want ErrFile with %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(pair.Certificate) != 1 {
				t.Fatalf("KeyPair = %d certificates, %v", len(pair.Certificate), err)
			}
		})
	}
	dir := t.TempDir()
	cert, key := testcert.SelfSigned(t, dir)
	if _, err := KeyPair(cert, filepath.Join(dir, "missing.pem")); !errors.Is(err, ErrFile) {
		t.Errorf("missing key: %v", err)
	}
	if _, err := KeyPair(key, key); err == nil {
		t.Errorf("a key as its own certificate loaded")
	}
}
