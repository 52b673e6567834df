package ctrd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestConfigWrite(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "c.sock")
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sock+".ttrpc", nil, 0o600); err != nil { // a leftover
		t.Fatal(err)
	}
	c := Config{Dir: filepath.Join(dir, "ctr"), Socket: sock, Disable: []string{"io.containerd.snapshotter.v1.overlayfs"}, Comment: "made by a test"}
	path, err := c.Write()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock + ".ttrpc"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover ttrpc socket: %v", err)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Root, State string
		Disabled    []string `toml:"disabled_plugins"`
		GRPC        struct{ Address string }
		TTRPC       struct{ Address string }
	}
	if _, err := toml.Decode(string(text), &got); err != nil {
		t.Fatalf("config does not parse: %v\n%s", err, text)
	}
	if !strings.HasPrefix(string(text), "# made by a test\n") || got.Root != filepath.Join(c.Dir, "root") ||
		got.State != filepath.Join(c.Dir, "state") || got.GRPC.Address != sock || got.TTRPC.Address != sock+".ttrpc" ||
		len(got.Disabled) != 8 || got.Disabled[7] != "io.containerd.snapshotter.v1.overlayfs" {
		t.Errorf("config %s:\n%s\nparsed %+v", path, text, got)
	}
}

func TestConfigRefusesLongSocketPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	_, err := Config{Dir: dir, Socket: filepath.Join(dir, "c.sock")}.Write()
	if !errors.Is(err, ErrSocketPathTooLong) {
		t.Fatalf("Write: %v, want ErrSocketPathTooLong", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory made despite the error: %v", err)
	}
}
