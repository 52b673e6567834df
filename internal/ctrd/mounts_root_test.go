//go:build !unit

package ctrd

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestMountsUnder(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "a", "b")
	for _, d := range []string{filepath.Join(dir, "a"), inner} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mount("tmpfs", filepath.Join(dir, "a"), "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", inner, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	got, err := MountsUnder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{inner, filepath.Join(dir, "a")}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("MountsUnder = %v, want %v (deepest first)", got, want)
	}
	if err := UnmountUnder(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := MountsUnder(dir); len(got) != 0 {
		t.Fatalf("after UnmountUnder: %v", got)
	}
}
