package containerd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
)

// ErrNoImageName means an imported archive named no image: its index.json
// carries neither an io.containerd.image.name nor an
// org.opencontainers.image.ref.name annotation.
var ErrNoImageName = errors.New("image archive names no image")

// ImportImage imports an OCI image layout tar (or docker save archive) into
// the containerd at socket, in namespace, names each image after the
// archive's ref annotation, and unpacks it for the snapshotter
// DetectSnapshotter picks. It returns the image names.
func ImportImage(ctx context.Context, socket, namespace string, r io.Reader) ([]string, error) {
	c, err := client.New(socket, client.WithDefaultNamespace(namespace))
	if err != nil {
		return nil, fmt.Errorf("import image: connect %s: %w", socket, err)
	}
	defer c.Close()
	return importImage(namespaces.WithNamespace(ctx, namespace), c, r)
}

func importImage(ctx context.Context, c *client.Client, r io.Reader) ([]string, error) {
	snap, err := DetectSnapshotter(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("import image: %w", err)
	}
	imgs, err := c.Import(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("import image: %w", err)
	}
	if len(imgs) == 0 {
		return nil, fmt.Errorf("import image: %w", ErrNoImageName)
	}
	names := make([]string, 0, len(imgs))
	for _, img := range imgs {
		if err := client.NewImage(c, img).Unpack(ctx, snap); err != nil {
			return names, fmt.Errorf("import image %s: unpack for %s: %w", img.Name, snap, err)
		}
		names = append(names, img.Name)
	}
	return names, nil
}
