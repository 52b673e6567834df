package conf

import (
	"bytes"
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

// FuzzLoadClusterPart: reading [cluster] from the file's start up to the
// end of that table gives what a read of the whole file gives: the same
// cluster, or the same problems. Only a problem after [cluster] may go
// unseen (a client checks [cluster] alone; the controller, Load, all).
func FuzzLoadClusterPart(f *testing.F) {
	example, err := os.ReadFile("../contrib/examples/cluster.toml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(example),
		"[cluster]\nname = \"x\"\n[[share]]\ngpus = \"many\"\n",
		"[cluster] # the cluster\r\nname = \"x\"\r\n  [runtime]\r\n",
		"[cluster]\nname = \"x\"\nadmins = [\n[\"a\"]]\n[runtime]\n",               // a cut inside an array
		"[cluster]\nname = \"x\"\nmunge_socket = \"\"\"\n[x]\n\"\"\"\n[runtime]\n", // inside a string
		"motd = \"\"\"\n[cluster]\n\"\"\"\n[cluster]\nname = \"x\"\n[runtime]\n",   // a header inside a string first
		"[cluster]\nname = \"X_Y\"\n[runtime]\nnamespace = 3\n",                    // a problem in [cluster]
		"[cluster]\nname = \"x\"\n[cluster]\nname = \"y\"\n",                       // twice: the whole read refuses it
		"[cluster]\nname = \"x\"\n[runtime\n",                                      // a syntax error after [cluster]
		"[runtime]\n[cluster]\nsocket = \"rel\"\n[scheduler]\n",
		"cluster.name = \"x\"\n[runtime]\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc string) {
		path := filepath.Join(dir, "c.toml")
		got, errGot := LoadCluster(writeTemp(t, path, doc))
		want, errWant := loadCluster(path, []byte(doc))
		switch {
		case errWant == nil && (errGot != nil || !reflect.DeepEqual(got, want)):
			t.Fatalf("%q: LoadCluster = %+v, %v; the whole file: %+v", doc, got, errGot, want)
		case errWant != nil && errGot != nil && errGot.Error() != errWant.Error():
			t.Fatalf("%q: LoadCluster: %v; the whole file: %v", doc, errGot, errWant)
		case errWant != nil && errGot == nil:
			// Allowed only for a problem after [cluster]: the part alone
			// reads as LoadCluster read it.
			part, ok := clusterPart([]byte(doc))
			if c, err := loadCluster(path, part); !ok || err != nil || !reflect.DeepEqual(c, got) {
				t.Fatalf("%q: LoadCluster = %+v, but the whole file: %v", doc, got, errWant)
			}
		}
	})
}

func writeTemp(t *testing.T, path, doc string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBlankComments: comment lines become empty lines, and only where the
// TOML lexer would have read them as comments without a problem.
func TestBlankComments(t *testing.T) {
	const tq = `"""`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"comments", "# a\n[cluster]\n  # b\nname = \"x\" # kept\n#c", "\n[cluster]\n\nname = \"x\" # kept\n"},
		{"crlf", "# a\r\n[cluster]\r\n\t# b é\r\n", "\r\n[cluster]\r\n\r\n"},
		{"in an array", "admins = [\n  # who\n  \"a\",\n]\n", "admins = [\n\n  \"a\",\n]\n"},
		{"multi-line basic string", "motd = " + tq + "\n# text\n" + tq + "\n# c\n", ""},
		{"multi-line literal string", "motd = '''\n# text\n'''\n", ""},
		{"control character", "# a\x01\n# b\n", ""},
		{"delete", "# a\x7f\n", ""},
		{"lone carriage return", "# a\rb\n", ""},
		{"carriage return at the end", "# a\r", ""},
		{"invalid UTF-8", "# \xff\n", ""},
		{"no comment", "[cluster]\nname = \"x\"\n", "[cluster]\nname = \"x\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = tc.in // unchanged
			}
			if got := string(blankComments([]byte(tc.in))); got != want {
				t.Errorf("blankComments(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
}

// FuzzBlankComments: the [cluster] part with its comment lines blanked
// reads as the part itself (the same cluster, or a problem in both), and
// every line keeps its number.
func FuzzBlankComments(f *testing.F) {
	example, err := os.ReadFile("../contrib/examples/cluster.toml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(example),
		"# a\n[cluster]\nname = \"x\" # n\n# b\n[runtime]\n",
		"[cluster]\nname = \"x\"\nadmins = [\n# c\n\"a\"]\n[runtime]\n",
		"[cluster]\nname = \"x\"\nmunge_socket = \"\"\"\n# not a comment\n\"\"\"\n[runtime]\n",
		"[cluster]\nname = 'x'''\n# c\n[runtime]\n",
		"[cluster]\nname =\n# c\n\"x\"\n[runtime]\n",
		"[cluster]\nname = \"x\"\n# \x00\n[runtime]\n",
		"[cluster]\r\nname = \"x\"\r\n# c\r\n[runtime]\r\n",
		"[cluster]\nname = \"x\"\n# c\r[runtime]\n",
		"[cluster]\nname = { a = 1,\n# c\n}\n[runtime]\n",
		"[cluster\n# c\n]\nname = \"x\"\n[runtime]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		part, _ := clusterPart([]byte(doc))
		blanked := blankComments(part)
		if got, want := bytes.Count(blanked, []byte("\n")), bytes.Count(part, []byte("\n")); got != want {
			t.Fatalf("%q: %d lines blanked, %d before", doc, got, want)
		}
		got, errGot := loadCluster("c.toml", blanked)
		want, errWant := loadCluster("c.toml", part)
		switch {
		case (errGot == nil) != (errWant == nil):
			t.Fatalf("%q: blanked %q: %v; as it is: %v", doc, blanked, errGot, errWant)
		case errGot == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("%q: blanked: %+v; as it is: %+v", doc, got, want)
		}
	})
}
