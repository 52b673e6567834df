package testenv

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestContainerdRefusesLongSocketPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if _, err := StartContainerd(dir); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("StartContainerd(%s): %v, want a socket path error", dir, err)
	}
}
