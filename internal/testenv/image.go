package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sync"

	"github.com/sharq-hpc/sharq/runtime/containerd"
)

// BusyboxRef is the name of the test image.
const BusyboxRef = "sharq.test/busybox:latest"

var (
	buildOnce sync.Once
	imageTar  []byte
	buildErr  error

	importMu sync.Mutex
	imported = map[[2]string]bool{} // socket, namespace
)

// BusyboxImage builds the test image (containerd.BuildImage from the host's
// static busybox, once per process) and imports it into namespace of the
// containerd at socket (once per pair). It returns the image reference.
func BusyboxImage(ctx context.Context, socket, namespace string) (ref string, err error) {
	buildOnce.Do(func() {
		bin, err := exec.LookPath("busybox")
		if err != nil {
			buildErr = fmt.Errorf("busybox image: %w", err)
			return
		}
		var buf bytes.Buffer
		if err := containerd.BuildImage(ctx, &buf, BusyboxRef, bin); err != nil {
			buildErr = err
			return
		}
		imageTar = buf.Bytes()
	})
	if buildErr != nil {
		return "", buildErr
	}
	importMu.Lock()
	defer importMu.Unlock()
	key := [2]string{socket, namespace}
	if imported[key] {
		return BusyboxRef, nil
	}
	names, err := containerd.ImportImage(ctx, socket, namespace, bytes.NewReader(imageTar))
	if err != nil {
		return "", err
	}
	if len(names) != 1 || names[0] != BusyboxRef {
		return "", fmt.Errorf("busybox image: imported %v, want [%s]", names, BusyboxRef)
	}
	imported[key] = true
	return BusyboxRef, nil
}
