package manpage

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
)

// FromApp makes the page of a command from its urfave App, set up as when
// it runs (App.Setup): NAME from its name and usage, SYNOPSIS from its
// usage text, DESCRIPTION, OPTIONS from its flags as --help shows them,
// COMMANDS from its subcommands, and the sections its help template adds
// after urfave's (cli's CONTROLLER). The help option and command are left
// out: every command has --help.
func FromApp(app *ucli.App, section int) *Page {
	p := &Page{
		Name:        app.Name,
		Section:     section,
		Summary:     app.Usage,
		Synopsis:    synopsis(app.UsageText, app.Name, len(visibleCommands(app.VisibleCommands())) > 0, app.ArgsUsage),
		Description: app.Description,
		Options:     options(app.VisibleFlags()),
	}
	for _, c := range visibleCommands(app.VisibleCommands()) {
		p.Commands = append(p.Commands, commands(app.Name, c)...)
	}
	p.Sections = templateSections(app.CustomAppHelpTemplate)
	return p
}

// synopsis is the usage text's lines, or urfave's usage line when it has
// none.
func synopsis(usageText, name string, hasCommands bool, argsUsage string) []string {
	if strings.TrimSpace(usageText) != "" {
		return strings.Split(strings.TrimRight(usageText, "\n"), "\n")
	}
	s := name + " [options]"
	if hasCommands {
		s += " command [command options]"
	}
	if argsUsage != "" {
		s += " " + argsUsage
	}
	return []string{s}
}

// commands lists c and its subcommands, depth first, each under its path.
func commands(parent string, c *ucli.Command) []Command {
	path := parent + " " + c.Name
	subs := visibleCommands(c.VisibleCommands())
	syn := c.UsageText
	if strings.TrimSpace(syn) == "" {
		syn = path
		if fl := options(c.VisibleFlags()); len(fl) > 0 {
			syn += " [options]"
		}
		if len(subs) > 0 {
			syn += " command"
		}
		if c.ArgsUsage != "" {
			syn += " " + c.ArgsUsage
		}
	}
	out := []Command{{
		Path:     path,
		Usage:    c.Usage,
		Synopsis: strings.Split(strings.TrimRight(syn, "\n"), "\n"),
		Text:     c.Description,
		Options:  options(c.VisibleFlags()),
	}}
	for _, s := range subs {
		out = append(out, commands(path, s)...)
	}
	return out
}

// visibleCommands leaves out urfave's help command.
func visibleCommands(cs []*ucli.Command) []*ucli.Command {
	var out []*ucli.Command
	for _, c := range cs {
		if c.Name != "help" {
			out = append(out, c)
		}
	}
	return out
}

// options are the flags as --help shows them (each flag's String, as the
// help template prints it: the names with their placeholder, a tab, the
// usage with its default and environment variables), but the help flag.
func options(flags []ucli.Flag) []Entry {
	var out []Entry
	for _, f := range flags {
		if names := f.Names(); len(names) > 0 && names[0] == "help" {
			continue
		}
		tag, text, _ := strings.Cut(f.String(), "\t")
		out = append(out, Entry{Tag: strings.TrimSpace(tag), Text: strings.TrimSpace(text)})
	}
	return out
}

// templateSections reads the sections a help template adds after its last
// action ({{...}}): lines "TITLE:" each followed by an indented text, as
// --help prints them.
func templateSections(tmpl string) []Section {
	i := strings.LastIndex(tmpl, "}}")
	if i < 0 {
		return nil
	}
	var out []Section
	for _, l := range strings.Split(tmpl[i+2:], "\n") {
		t := strings.TrimSpace(l)
		switch {
		case !indented(l) && strings.HasSuffix(t, ":") && t == strings.ToUpper(t) && t != ":":
			out = append(out, Section{Title: strings.TrimSuffix(t, ":")})
		case len(out) > 0:
			s := &out[len(out)-1]
			s.Text += strings.TrimPrefix(l, "   ") + "\n"
		}
	}
	return out
}
