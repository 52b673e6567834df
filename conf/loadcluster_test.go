package conf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLoadCluster: the light mode reads [cluster] as Load does, with the
// same problems (file and line), and nothing else.
func TestLoadCluster(t *testing.T) {
	full, err := Load("../contrib/examples/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadCluster("../contrib/examples/cluster.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, full.Cluster) {
		t.Errorf("LoadCluster = %+v\nLoad's [cluster] = %+v", got, full.Cluster)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"rest not read", "[cluster]\nname = \"x\"\n[[share]]\ngpus = \"many\"\n", ""},
		{"no cluster table", "[[share]]\nname = \"a\"\n", "c.toml: missing [cluster] table (cluster.name is required)"},
		{"bad name", "# c\n[cluster]\nname = \"X_Y\"\n", `c.toml:3:1: cluster: name: "X_Y" is not a valid cluster name`},
		{"bad socket", "[cluster]\nname = \"x\"\nsocket = \"rel.sock\"\n", "c.toml:3:1: cluster: socket:"},
		{"syntax", "[cluster\n", "to end table name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "c.toml")
			if err := os.WriteFile(p, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadCluster(p)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+"/", ""), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// BenchmarkLoad and BenchmarkLoadCluster: what a client command pays to
// find the controller, before and after issue 17's light mode.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load("../contrib/examples/cluster.toml"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadCluster(b *testing.B) {
	for b.Loop() {
		if _, err := LoadCluster("../contrib/examples/cluster.toml"); err != nil {
			b.Fatal(err)
		}
	}
}
