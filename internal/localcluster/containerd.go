package localcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/containerd/containerd/v2/client"
)

// containerdConfig is a version 2 config with only the plugins running
// containers from local images needs (the template of internal/testenv,
// whose StartContainerd fixes the socket inside its directory and removes
// the directory, log included, when it stops: the local cluster keeps its
// socket where the configuration says and its log with the others).
const containerdConfig = `# Written by sharq-up for the local cluster; removed when it stops.
version = 2
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
]

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

// pingContainerd reports whether a containerd answers at socket.
func pingContainerd(ctx context.Context, socket string) error {
	if _, err := os.Stat(socket); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cl, err := client.New(socket, client.WithTimeout(3*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = cl.Version(ctx)
	return err
}

// startContainerd starts a containerd with its root and state under
// l.ctrDir and its socket where the configuration says.
func (u *up) startContainerd(ctx context.Context) error {
	l := u.l
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return fmt.Errorf("containerd: %w (make up installs Debian's containerd package; or run contrib/local/install-deps.sh)", err)
	}
	for _, d := range []string{l.ctrDir, filepath.Dir(l.ctrSock)} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return fmt.Errorf("containerd: %w", err)
		}
	}
	// A socket file nobody answers at is a leftover.
	_ = os.Remove(l.ctrSock)
	_ = os.Remove(l.ctrSock + ".ttrpc")
	config := filepath.Join(l.ctrDir, "config.toml")
	text := fmt.Sprintf(containerdConfig, filepath.Join(l.ctrDir, "root"), filepath.Join(l.ctrDir, "state"),
		l.ctrSock, l.ctrSock+".ttrpc", filepath.Join(l.ctrDir, "opt"))
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		return fmt.Errorf("containerd: %w", err)
	}
	p, err := u.startProcess("containerd", bin, "--config", config)
	if err != nil {
		return err
	}
	u.containerd = p
	return u.waitFor(ctx, p, func(ctx context.Context) error { return pingContainerd(ctx, l.ctrSock) })
}
