package runtime

import (
	"strings"
	"testing"

	"github.com/containerd/containerd/v2/pkg/identifiers"
)

func TestContainerID(t *testing.T) {
	tests := []struct {
		name, node, job, prefix string
	}{
		{"plain", "n1", "12.lab", "n1.12.lab-"},
		{"brackets", "n1", "12[3].lab", "n1.12-3.lab-"},
		{"leading junk", "-n1", "..5", "n1.5-"},
		{"only junk", "", "[]", "j-"},
		{"underscore kept", "gpu_01", "7.x", "gpu_01.7.x-"},
		{"long", strings.Repeat("a", 100), "1.x", strings.Repeat("a", maxIDPrefix) + "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := ContainerID(tc.node, tc.job)
			if !strings.HasPrefix(id, tc.prefix) || len(id) != len(tc.prefix)+12 {
				t.Errorf("ContainerID(%q, %q) = %q, want %q + 12 hex digits", tc.node, tc.job, id, tc.prefix)
			}
			if err := identifiers.Validate(id); err != nil {
				t.Errorf("ContainerID(%q, %q) = %q: %v", tc.node, tc.job, id, err)
			}
		})
	}
	// Pairs that read alike are still distinct containers.
	if a, b := ContainerID("a.b", "c"), ContainerID("a", "b.c"); a == b {
		t.Errorf("distinct pairs share id %s", a)
	}
	if a, b := ContainerID("n", "12[3].lab"), ContainerID("n", "12-3-.lab"); a == b {
		t.Errorf("distinct jobs share id %s", a)
	}
}

func FuzzContainerID(f *testing.F) {
	f.Add("n1", "12.lab")
	f.Add("", "")
	f.Add("ノード", "12[3].lab")
	f.Add(strings.Repeat("x", 200), "-._-")
	f.Fuzz(func(t *testing.T, node, job string) {
		id := ContainerID(node, job)
		if err := identifiers.Validate(id); err != nil {
			t.Fatalf("ContainerID(%q, %q) = %q: %v", node, job, id, err)
		}
		if id != ContainerID(node, job) {
			t.Fatal("not deterministic")
		}
	})
}
