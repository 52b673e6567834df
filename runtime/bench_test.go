package runtime

import (
	"context"
	"io"
	"testing"
)

func BenchmarkContainerID(b *testing.B) {
	for b.Loop() {
		ContainerID("gpu-node-017", "123456[42].cluster.example.org")
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
