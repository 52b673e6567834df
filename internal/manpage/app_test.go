package manpage

import (
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// A page holds what --help shows: usage, description, each option as
// urfave prints it (placeholder, default, environment), the subcommands
// with theirs, and the sections a help template adds; not the help option
// or command.
func TestFromApp(t *testing.T) {
	app := &ucli.App{
		Name: "qfoo", Usage: "do foo", Description: "Does foo.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "config", Aliases: []string{"c"}, Value: "/etc/x.toml", EnvVars: []string{"X_CONF"}, Usage: "configuration `FILE`"},
			&ucli.BoolFlag{Name: "secret", Hidden: true},
		},
		Commands: []*ucli.Command{{
			Name: "show", Usage: "show things",
			Subcommands: []*ucli.Command{{Name: "nodes", Usage: "the nodes", UsageText: "qfoo show nodes [--json]",
				Flags: []ucli.Flag{&ucli.BoolFlag{Name: "json", Usage: "as JSON"}}}},
		}},
		CustomAppHelpTemplate: ucli.AppHelpTemplate + "\nCONTROLLER:\n   How it connects.\n      SHARQ_SERVER=host:port\n",
	}
	app.Setup()
	p := FromApp(app, 1)
	if p.Name != "qfoo" || p.Summary != "do foo" || p.Description != "Does foo." {
		t.Errorf("page %+v", p)
	}
	if want := []string{"qfoo [options] command [command options]"}; strings.Join(p.Synopsis, "|") != strings.Join(want, "|") {
		t.Errorf("synopsis %q, want %q", p.Synopsis, want)
	}
	if len(p.Options) != 1 || p.Options[0].Tag != "--config FILE, -c FILE" ||
		p.Options[0].Text != `configuration FILE (default: "/etc/x.toml") [$X_CONF]` {
		t.Errorf("options %+v", p.Options)
	}
	var paths []string
	for _, c := range p.Commands {
		paths = append(paths, c.Path+": "+strings.Join(c.Synopsis, "|")+": "+c.Usage)
	}
	want := []string{"qfoo show: qfoo show command: show things", "qfoo show nodes: qfoo show nodes [--json]: the nodes"}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands\n%s\nwant\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
	if c := p.Commands[1]; len(c.Options) != 1 || c.Options[0].Tag != "--json" {
		t.Errorf("nodes' options %+v", c.Options)
	}
	if len(p.Sections) != 1 || p.Sections[0].Title != "CONTROLLER" ||
		p.Sections[0].Text != "How it connects.\n   SHARQ_SERVER=host:port\n\n" {
		t.Errorf("sections %+v", p.Sections)
	}
}
