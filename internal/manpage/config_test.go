package manpage

import (
	"strings"
	"testing"
)

var testKeys = map[string][]string{
	"":        {"cluster", "etcd", "share"},
	"cluster": {"name", "spool", "tls_cert", "tls_key"},
	"etcd":    {"endpoints"},
	"share":   {"name", "gpus"},
}

const testExample = `# An example.
# Second line.

[cluster]
# The name.
name = "lab"
# The store: "bbolt" or "etcd".
# spool = "etcd"
# TLS: both or neither; name = "x" in prose is not a key.
tls_cert = "/c"
tls_key = "/k"

# Only with etcd.
# [etcd]
# The members.
#   a list
# endpoints = ["http://a:1"]

# A share.
[[share]]
# Its name.
name = "a"
# Its GPUs.
gpus = 4

[[share]]
name = "b"
gpus = 2
`

func TestConfigPage(t *testing.T) {
	p := &Page{Name: "sharq.toml", Section: 5}
	if err := ConfigPage(p, testExample, testKeys); err != nil {
		t.Fatal(err)
	}
	if p.Description != "An example.\nSecond line.\n" {
		t.Errorf("description %q", p.Description)
	}
	if len(p.Sections) != 1 || len(p.Sections[0].Sub) != 3 {
		t.Fatalf("sections %+v", p.Sections)
	}
	var got []string
	for _, s := range p.Sections[0].Sub {
		got = append(got, s.Title+" ("+s.Text+")")
		for _, e := range s.Entries {
			got = append(got, e.Tag+": "+strings.ReplaceAll(e.Text, "\n", "|"))
		}
	}
	want := []string{
		"[cluster] ()",
		`name: The name.||Example:|   name = "lab"|`,
		`spool: The store: "bbolt" or "etcd".||Example:|   spool = "etcd"|`,
		`tls_cert, tls_key: TLS: both or neither; name = "x" in prose is not a key.||Example:|   tls_cert = "/c"|   tls_key = "/k"|`,
		"[etcd] (Only with etcd.)",
		`endpoints: The members.|  a list||Example:|   endpoints = ["http://a:1"]|`,
		"[[share]] (A share.)",
		`name: Its name.||Example:|   name = "a"|`,
		`gpus: Its GPUs.||Example:|   gpus = 4|`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The page covers the loader's keys exactly: each mistake in the example
// is an error that names it.
func TestConfigPageRefuses(t *testing.T) {
	for _, tc := range []struct{ name, example, want string }{
		{"undocumented key", strings.Replace(testExample, "# Its name.\n", "", 1), "share.name has no comment above it"},
		{"missing key", strings.Replace(testExample, "# The name.\nname = \"lab\"\n", "", 1), "does not document cluster.name"},
		{"missing table", testExample[:strings.Index(testExample, "# Only with etcd.")], "[etcd]"},
		{"unknown table", testExample + "[bogus]\n", "table [bogus] is not one the loader reads"},
		{"unknown key", testExample + "# Typo.\nnmae = 1\n", `neither a table, a key the loader reads`},
		{"twice", testExample + "# Again.\ngpus = 3\n", "share.gpus is documented twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ConfigPage(&Page{}, tc.example, testKeys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}
