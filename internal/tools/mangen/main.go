// Command mangen writes the manual pages of sharq's commands and of its
// configuration file into man/ (make man), from the definitions their
// --help prints (see internal/manpage); with -check it only says which
// pages are not current.
//
//	go run ./internal/tools/mangen [-check] [-root DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/sharq-hpc/sharq/cli"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/ctld"
	"github.com/sharq-hpc/sharq/daemon/noded"
	"github.com/sharq-hpc/sharq/internal/manpage"
	"github.com/sharq-hpc/sharq/runtime/gpu"
	"github.com/sharq-hpc/sharq/sim"
)

// manDir is where the pages live, in the repository.
const manDir = "man"

// exampleConfig documents every configuration key (see manpage.ConfigPage).
const exampleConfig = "contrib/examples/cluster.toml"

// notInstalled are the commands under cmd/ that get no page: they are not
// installed (make install).
var notInstalled = map[string]string{
	"sharq-up": "a development tool: it runs a local cluster from a checkout of the repository (make up)",
}

func main() {
	check := flag.Bool("check", false, "write nothing: list the pages that are not current and exit 1 if any")
	root := flag.String("root", ".", "the repository's `DIR`")
	flag.Parse()
	if err := run(*root, *check, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mangen:", err)
		os.Exit(1)
	}
}

func run(root string, check bool, out io.Writer) error {
	pages, err := pages(root)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, manDir)
	stale, err := compare(dir, pages)
	if err != nil {
		return err
	}
	if check {
		if len(stale) > 0 {
			return fmt.Errorf("not current (make man): %s", strings.Join(stale, ", "))
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range stale {
		p := filepath.Join(dir, name)
		src, ok := pages[name]
		if !ok {
			if err := os.Remove(p); err != nil {
				return err
			}
			fmt.Fprintln(out, "removed", p)
			continue
		}
		if err := os.WriteFile(p, src, 0o644); err != nil {
			return err
		}
		fmt.Fprintln(out, "wrote", p)
	}
	return nil
}

// compare returns the names of the pages that differ from dir's, are
// missing there, or are there but no longer made.
func compare(dir string, pages map[string][]byte) ([]string, error) {
	var stale []string
	for name, src := range pages {
		have, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if !bytes.Equal(have, src) {
			stale = append(stale, name)
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.[158]"))
	if err != nil {
		return nil, err
	}
	for _, p := range old {
		if _, ok := pages[filepath.Base(p)]; !ok {
			stale = append(stale, filepath.Base(p))
		}
	}
	slices.Sort(stale)
	return stale, nil
}

// pages makes every page: file name to roff source.
func pages(root string) (map[string][]byte, error) {
	var all []*manpage.Page
	for _, name := range cli.CommandNames() {
		app, err := cli.App(name)
		if err != nil {
			return nil, err
		}
		all = append(all, manpage.FromApp(app, 1))
	}
	for _, d := range []struct {
		app     *ucli.App
		section int
	}{{ctld.NewApp(io.Discard), 8}, {noded.NewApp(nil), 8}, {sim.NewApp(io.Discard), 1}, {gpu.NewApp(io.Discard, io.Discard), 1}} {
		d.app.Setup()
		all = append(all, manpage.FromApp(d.app, d.section))
	}
	example, err := os.ReadFile(filepath.Join(root, exampleConfig))
	if err != nil {
		return nil, err
	}
	cfg := &manpage.Page{
		Name: "sharq.toml", Section: 5, Summary: "the sharq cluster configuration file",
		Synopsis: []string{"/etc/sharq/cluster.toml"},
		Sections: []manpage.Section{{Title: "FILES", Entries: []manpage.Entry{
			{Tag: "/etc/sharq/cluster.toml", Text: "The configuration sharqctld, sharqd and the client commands read (--config, $SHARQ_CONF), the same file on every host."},
			{Tag: "share/doc/sharq/cluster.toml", Text: "Under the installation prefix (contrib/examples/cluster.toml in the source): the commented example this page is made from, every key set or shown commented out."},
		}}},
	}
	if err := manpage.ConfigPage(cfg, string(example), conf.Keys()); err != nil {
		return nil, fmt.Errorf("%s: %w", exampleConfig, err)
	}
	all = append(all, cfg)

	out := make(map[string][]byte, len(all))
	for _, p := range all {
		for _, o := range all {
			if o != p {
				p.SeeAlso = append(p.SeeAlso, o.Ref())
			}
		}
		slices.SortFunc(p.SeeAlso, func(a, b string) int { return strings.Compare(seeAlsoKey(a), seeAlsoKey(b)) })
		out[p.FileName()] = p.Roff()
	}
	return out, nil
}

// seeAlsoKey orders references by section, then name, as man-pages(7)
// asks.
func seeAlsoKey(ref string) string {
	name, sec, _ := strings.Cut(ref, "(")
	return sec + name
}
