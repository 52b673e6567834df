package containerd

import (
	"context"
	"io"
	"testing"

	"github.com/sharq-hpc/sharq/runtime"
)

func BenchmarkContainerID(b *testing.B) {
	for b.Loop() {
		runtime.ContainerID("gpu-node-017", "123456[42].cluster.example.org")
	}
}

func BenchmarkBuildImage(b *testing.B) {
	bb := "/bin/busybox"
	for b.Loop() {
		if err := BuildImage(context.Background(), io.Discard, "bench:latest", bb); err != nil {
			b.Fatal(err)
		}
	}
}
