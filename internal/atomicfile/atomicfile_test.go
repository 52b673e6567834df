package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		old     string // "" = no file before
		durable bool
	}{
		{"new file, durable", "", true},
		{"replace, durable", "old contents", true},
		{"replace, not durable", "old contents", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(path, []byte("new"), tc.durable); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Fatalf("contents %q, %v; want \"new\"", got, err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("mode %v, %v; want 0600", fi.Mode(), err)
			}
			if names, _ := os.ReadDir(dir); len(names) != 1 {
				t.Fatalf("directory holds %d entries, want only the file", len(names))
			}
		})
	}
}

func TestWriteMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "f")
	if err := Write(path, []byte("x"), true); err == nil {
		t.Fatal("Write into a missing directory succeeded")
	}
}
