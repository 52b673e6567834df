package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/sharq-hpc/sharq/internal/munged"
)

// startMunged runs the cluster's munged when the configuration has a TCP
// client port (client_listen): jobs reach the controller there, with a
// credential from it. Its key (made once) and state live in
// StateDir/munge, its socket where munge_socket says.
func (u *up) startMunged(ctx context.Context) error {
	cl := u.l.cfg.Cluster
	if cl.ClientListen == "" {
		return nil
	}
	bin, err := exec.LookPath("munged")
	if err != nil {
		return fmt.Errorf("munged: %w (install Debian's munge: make deps)", err)
	}
	dir := filepath.Join(u.l.state, "munge")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("munged: %w", err)
	}
	key := filepath.Join(dir, "munge.key")
	if _, err := os.Stat(key); errors.Is(err, os.ErrNotExist) {
		if err := munged.NewKey(key); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(cl.MungeSocket), 0o755); err != nil {
		return fmt.Errorf("munged: %w", err)
	}
	_ = os.Remove(cl.MungeSocket)
	p, err := u.startProcess("munged", bin, "--foreground", "--force", "--num-threads=4",
		"--socket="+cl.MungeSocket, "--key-file="+key,
		"--pid-file="+filepath.Join(dir, "munged.pid"), "--seed-file="+filepath.Join(dir, "munged.seed"),
		"--log-file="+filepath.Join(dir, "munged.log"))
	if err != nil {
		return err
	}
	if err := u.waitFor(ctx, p, func(context.Context) error {
		_, err := os.Stat(cl.MungeSocket)
		return err
	}); err != nil {
		return err
	}
	u.printf("  munged     started, socket %s (jobs submit jobs over %s)\n", cl.MungeSocket, cl.ClientListen)
	return nil
}
