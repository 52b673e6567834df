package munged

import (
	"context"
	"path/filepath"
	"testing"
)

// ForTest starts a munged in a temporary directory of tb and stops it when
// tb ends. key is its key file; "" makes a fresh key, so the daemon shares
// it with nobody.
func ForTest(tb testing.TB, key string) *Daemon {
	tb.Helper()
	dir := tb.TempDir()
	if key == "" {
		key = filepath.Join(dir, "munge.key")
		if err := NewKey(key); err != nil {
			tb.Fatal(err)
		}
	}
	d, err := Start(context.Background(), filepath.Join(dir, "m"), key)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(d.Stop)
	return d
}
