package ctrd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxSocketPath is sun_path's size less the NUL and the ".ttrpc" suffix
// containerd adds for its second socket.
const MaxSocketPath = 107 - len(".ttrpc")

// ErrSocketPathTooLong means a socket path does not fit in sun_path.
var ErrSocketPathTooLong = errors.New("socket path too long")

// configTemplate is a version 2 config: only the plugins running
// containers from local images need (no CRI, no tracing, no aufs/btrfs/zfs/
// devmapper snapshotters; the v1 linux runtime stays, containerd 1.6's
// tasks service needs it), every path inside the daemon's own directory.
const configTemplate = `%[7]sversion = 2
root = %[1]q
state = %[2]q
oom_score = 0
disabled_plugins = [
  "io.containerd.grpc.v1.cri",
  "io.containerd.internal.v1.tracing",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
%[6]s]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
`

// Config describes a private containerd's configuration.
type Config struct {
	Dir     string   // holds root/, state/, opt/ and config.toml
	Socket  string   // gRPC socket; the ttrpc one is Socket+".ttrpc"
	Disable []string // more plugins to leave out (e.g. "io.containerd.snapshotter.v1.overlayfs")
	Comment string   // a line written as a TOML comment at the top, if not empty
}

// Text returns the config.toml for c.
func (c Config) Text() string {
	var extra strings.Builder
	for _, p := range c.Disable {
		fmt.Fprintf(&extra, "  %q,\n", p)
	}
	comment := ""
	if c.Comment != "" {
		comment = "# " + c.Comment + "\n"
	}
	return fmt.Sprintf(configTemplate, filepath.Join(c.Dir, "root"), filepath.Join(c.Dir, "state"),
		c.Socket, c.Socket+".ttrpc", filepath.Join(c.Dir, "opt"), extra.String(), comment)
}

// Write checks the socket path's length, makes Dir and the socket's
// directory (mode 0711 when new), removes socket files left by an earlier
// daemon (the caller has found that nobody answers there) and writes
// Dir/config.toml. It returns the config file's path.
func (c Config) Write() (string, error) {
	if len(c.Socket) > MaxSocketPath {
		return "", fmt.Errorf("containerd config: %w: %s longer than %d bytes", ErrSocketPathTooLong, c.Socket, MaxSocketPath)
	}
	for _, d := range []string{c.Dir, filepath.Dir(c.Socket)} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return "", fmt.Errorf("containerd config: %w", err)
		}
	}
	_ = os.Remove(c.Socket)
	_ = os.Remove(c.Socket + ".ttrpc")
	path := filepath.Join(c.Dir, "config.toml")
	if err := os.WriteFile(path, []byte(c.Text()), 0o644); err != nil {
		return "", fmt.Errorf("containerd config: %w", err)
	}
	return path, nil
}
