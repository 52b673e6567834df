package main

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/internal/manpage"
)

const root = "../../.."

// The checked-in pages are what the sources make now: a changed option,
// usage or configuration comment needs make man.
func TestPagesCurrent(t *testing.T) {
	if err := run(root, true, nil); err != nil {
		t.Fatal(err)
	}
}

// Every command under cmd/ has a page, unless it is not installed; every
// client command of the Makefile is in cli.Commands (which the pages are
// made from).
func TestEveryCommandHasPage(t *testing.T) {
	pages, err := pages(root)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("%d commands under cmd/", len(dirs))
	}
	for _, d := range dirs {
		name := d.Name()
		_, in1 := pages[name+".1"]
		_, in8 := pages[name+".8"]
		_, skip := notInstalled[name]
		switch {
		case skip && (in1 || in8):
			t.Errorf("cmd/%s has a page but is listed as not installed", name)
		case !skip && !in1 && !in8:
			t.Errorf("cmd/%s has no page: add it to cli.Commands (cli/commands.go) or to mangen's list, then make man", name)
		}
	}
	for _, c := range makefileList(t, "CLIENTS") {
		if _, ok := cli.Commands[c]; !ok {
			t.Errorf("the Makefile's client %s is not in cli.Commands (cli/commands.go)", c)
		}
	}
	if _, ok := pages["sharq.toml.5"]; !ok {
		t.Error("no page for the configuration file")
	}
}

// makefileList returns the words of a "NAME = words" line of the Makefile.
func makefileList(t *testing.T, name string) []string {
	f, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.Fields(v)
		}
	}
	t.Fatalf("the Makefile has no %s", name)
	return nil
}

// A stale, missing or extra page is reported by -check and replaced,
// written or removed by a run without it.
func TestRunWritesAndChecks(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"contrib/examples", "man"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	example, err := os.ReadFile(filepath.Join(root, exampleConfig))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, exampleConfig), example, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, "man", name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("qsub.1", "stale")
	write("gone.1", "a page of a command that no longer exists")
	err = run(dir, true, nil)
	if err == nil || !strings.Contains(err.Error(), "gone.1") || !strings.Contains(err.Error(), "qsub.1") || !strings.Contains(err.Error(), "qstat.1") {
		t.Fatalf("check: %v, want gone.1, qsub.1 and qstat.1 named", err)
	}
	var out strings.Builder
	if err := run(dir, false, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "man", "gone.1")); !os.IsNotExist(err) {
		t.Errorf("gone.1 left: %v", err)
	}
	if err := run(dir, true, nil); err != nil {
		t.Errorf("after writing: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "man", "qsub.1"))
	if err != nil || !strings.Contains(string(b), ".SH \"NAME\"\nqsub \\- submit a batch job\n") {
		t.Errorf("qsub.1: %v\n%.300s", err, b)
	}
}

// Each client command's page says what its --help says: the summary,
// every option's names and text, and every subcommand's usage line.
func TestPagesSayWhatHelpSays(t *testing.T) {
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, name := range cli.CommandNames() {
		t.Run(name, func(t *testing.T) {
			var out, errOut strings.Builder
			sys := &cli.Sys{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}
			if code := cli.Commands[name](context.Background(), []string{name, "--help"}, sys); code != 0 {
				t.Fatalf("%s --help: exit %d: %s", name, code, errOut.String())
			}
			help := words(out.String())
			app, err := cli.App(name)
			if err != nil {
				t.Fatal(err)
			}
			p := manpage.FromApp(app, 1)
			want := []string{name + " - " + p.Summary}
			for _, o := range p.Options {
				want = append(want, o.Tag+" "+o.Text)
			}
			for _, c := range p.Commands {
				if strings.Count(c.Path, " ") == 1 { // --help lists the first level
					want = append(want, strings.TrimPrefix(c.Path, name+" ")+" "+c.Usage)
				}
			}
			for _, w := range want {
				if !strings.Contains(help, words(w)) {
					t.Errorf("the page says %q, --help does not:\n%s", w, out.String())
				}
			}
		})
	}
}
