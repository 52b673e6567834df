//go:build !unit

package ctld

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sharq-hpc/sharq/internal/secret"
)

// TestControllerSecretFile checks the controller refuses the secret files
// the node daemon refuses (one reader for both), and trims it alike.
func TestControllerSecretFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		uid     int
		ok      bool
	}{
		{"root 0600", "  " + testSecret + " \n", 0o600, 0, true},
		{"group readable", testSecret, 0o640, 0, false},
		{"owned by a user", testSecret, 0o600, 1000, false},
		{"blank", "\n \n", 0o600, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "cluster.toml")
			if err := os.WriteFile(conf, []byte(clusterTOML(dir, freeAddr(t), []string{"n1:8"}, twoShares)), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "secret")
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(path, tt.uid, tt.uid); err != nil {
				t.Fatal(err)
			}
			c, err := New(context.Background(), Options{ConfigPath: conf})
			if !tt.ok {
				if !errors.Is(err, secret.ErrFile) {
					t.Fatalf("New = %v, want secret.ErrFile", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.sp.Close()
			if string(c.secret) != testSecret {
				t.Errorf("secret %q, want %q", c.secret, testSecret)
			}
		})
	}
}
