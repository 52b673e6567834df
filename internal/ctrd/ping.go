package ctrd

import (
	"context"
	"os"
	"time"

	"github.com/containerd/containerd/v2/client"
)

// Ping reports whether a containerd answers a Version call at socket
// within 3 s (or ctx's end); a missing socket file is its error.
func Ping(ctx context.Context, socket string) error {
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
