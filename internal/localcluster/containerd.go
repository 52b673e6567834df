package localcluster

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/sharq-hpc/sharq/internal/ctrd"
)

// startContainerd starts a containerd with its root and state under
// l.ctrDir and its socket where the configuration says (ctrd's config; not
// ctrd.Start, whose daemon keeps socket and log inside its directory and
// removes the directory when it stops: the local cluster logs with its
// other processes and removes its files in removeFiles).
func (u *up) startContainerd(ctx context.Context) error {
	l := u.l
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return fmt.Errorf("containerd: %w (make up installs Debian's containerd package; or run contrib/local/install-deps.sh)", err)
	}
	// Write also removes the socket files: nobody answers there (start
	// pinged first), so they are leftovers.
	config, err := ctrd.Config{Dir: l.ctrDir, Socket: l.ctrSock,
		Comment: "Written by sharq-up for the local cluster; removed when it stops."}.Write()
	if err != nil {
		return fmt.Errorf("containerd: %w", err)
	}
	p, err := u.startProcess("containerd", bin, "--config", config)
	if err != nil {
		return err
	}
	u.containerd = p
	return u.waitFor(ctx, p, func(ctx context.Context) error { return ctrd.Ping(ctx, l.ctrSock) })
}
