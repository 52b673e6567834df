package noded

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCheckpointFS(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "ckpt")
	// Node daemons racing on one shared directory agree on one marker.
	const n = 8
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs := checkpointFS(shared)
			if fs.Error != "" {
				t.Errorf("node %d: %s", i, fs.Error)
			}
			got[i] = fs.Marker
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] == "" || got[i] != got[0] {
			t.Fatalf("markers %q: nodes sharing a directory disagree", got)
		}
	}
	if fs := checkpointFS(shared); fs.Root != shared || fs.Type == "" || fs.Marker != got[0] {
		t.Errorf("second look: %+v", fs)
	}
	if left, _ := filepath.Glob(filepath.Join(shared, ".marker-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// Another directory (a node-local one) has another marker.
	if other := checkpointFS(t.TempDir()); other.Marker == "" || other.Marker == got[0] {
		t.Errorf("a node-local directory has marker %q, the shared one %q", other.Marker, got[0])
	}
	// A file that is not a marker is reported, not overwritten.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, markerFile), []byte(strings.Repeat("x", 500)), 0o644)
	if fs := checkpointFS(bad); fs.Error == "" || fs.Marker != "" {
		t.Errorf("an oversized marker: %+v", fs)
	}
	// A root that cannot be made is reported.
	if fs := checkpointFS("/proc/sharq-ckpt"); fs.Error == "" {
		t.Errorf("checkpoint root under /proc: %+v", fs)
	}
}
