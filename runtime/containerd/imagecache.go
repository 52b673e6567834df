package containerd

import (
	"context"
	"fmt"
	"sync"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	digest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Prepared images.
//
// Every start needs three things of its image: that it is unpacked for the
// snapshotter, its config (for oci.WithImageConfig) and its layers' diff
// IDs (the parent of the job's snapshot). Asked of containerd they cost a
// dozen calls per start (the manifest and the config read three times, a
// snapshot Stat), all of them answering the same for one image digest. So
// they are asked once per digest and the answers kept: a start then makes
// one call for the image (GetImage: which digest the name has now), and the
// config reaches the spec from memory (a descriptor carrying its data).
// An image re-tagged to new content has a new digest and is prepared anew;
// an unpacked snapshot removed behind the node's back makes the start's
// snapshot Prepare fail with NotFound, and the start prepares the digest
// again (Containerd.newImageContainer).

// maxPreparedImages bounds the cache; past it the cache starts over.
const maxPreparedImages = 64

// preparedImage is what a start needs of one image digest, once it is
// unpacked for the runtime's snapshotter.
type preparedImage struct {
	config  ocispec.Descriptor // with Data: read without the content store
	diffIDs []digest.Digest
}

// imageCache holds the prepared images of one snapshotter by digest.
type imageCache struct {
	mu     sync.Mutex
	images map[digest.Digest]*preparedImage
}

func (ic *imageCache) get(d digest.Digest) *preparedImage {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	return ic.images[d]
}

func (ic *imageCache) put(d digest.Digest, p *preparedImage) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if ic.images == nil || len(ic.images) >= maxPreparedImages {
		ic.images = map[digest.Digest]*preparedImage{}
	}
	ic.images[d] = p
}

func (ic *imageCache) forget(d digest.Digest) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	delete(ic.images, d)
}

// prepareImage unpacks img for snap when it is not yet and reads its
// config and diff IDs.
func prepareImage(ctx context.Context, img client.Image, snap string) (*preparedImage, error) {
	if ok, err := img.IsUnpacked(ctx, snap); err != nil {
		return nil, fmt.Errorf("image %s: %w", img.Name(), err)
	} else if !ok {
		if err := img.Unpack(ctx, snap); err != nil {
			return nil, fmt.Errorf("unpack %s: %w", img.Name(), err)
		}
	}
	cfg, err := img.Config(ctx)
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", img.Name(), err)
	}
	data, err := content.ReadBlob(ctx, img.ContentStore(), cfg)
	if err != nil {
		return nil, fmt.Errorf("image %s: config: %w", img.Name(), err)
	}
	cfg.Data = data
	diffIDs, err := img.RootFS(ctx)
	if err != nil {
		return nil, fmt.Errorf("image %s: layers: %w", img.Name(), err)
	}
	return &preparedImage{config: cfg, diffIDs: diffIDs}, nil
}

// preparedClientImage is a containerd image whose config and diff IDs come
// from its preparedImage: oci.WithImageConfig and client.WithNewSnapshot
// ask it instead of the content store.
type preparedClientImage struct {
	client.Image
	p      *preparedImage
	snap   string // the snapshotter it is unpacked for
	cached bool   // p was prepared by an earlier start
}

func (i *preparedClientImage) Config(context.Context) (ocispec.Descriptor, error) {
	return i.p.config, nil
}

func (i *preparedClientImage) RootFS(context.Context) ([]digest.Digest, error) {
	return i.p.diffIDs, nil
}
