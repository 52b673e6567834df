package manpage

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words", "plain words"},
		{"-l ngpus=4", `\-l ngpus=4`},
		{`C:\path`, `C:\epath`},
		{".starts with a dot", `\&.starts with a dot`},
		{"'quoted'", `\(aqquoted\(aq`},
		{"`cmd`", `\(gacmd\(ga`},
		{"a,b,c and a, b", `a,\:b,\:c and a, b`},
		{"trailing,", "trailing,"},
		{"tab\there", "tab        here"},
		{"bell\a", "bell"},
		{"ünïcode × –", "ünïcode × –"},
	} {
		if got := escape(tc.in); got != tc.want {
			t.Errorf("escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestQuoteArg(t *testing.T) {
	if got, want := quoteArg(`say "hi"`), `"say \(dqhi\(dq"`; got != want {
		t.Errorf("quoteArg = %q, want %q", got, want)
	}
}

// A help text's layout: paragraphs at blank lines, filled lines, and
// indented runs kept as blocks without their common indentation.
func TestText(t *testing.T) {
	for _, tc := range []struct {
		name, para, in, want string
	}{
		{"filled", "PP", "one\ntwo\n", "one\ntwo\n"},
		{"paragraphs", "PP", "one\n\n\ntwo", "one\n.PP\ntwo\n"},
		{"example block", "PP", "Examples:\n   qdel 123\n     qdel -W force 1\nafter",
			"Examples:\n.RS \"4\"\n.nf\nqdel 123\n  qdel \\-W force 1\n.fi\n.RE\nafter\n"},
		{"in an entry", "IP", "a\n   x\nb\n\nc",
			"a\n.RS\n.RS \"4\"\n.nf\nx\n.fi\n.RE\n.RE\n.IP\nb\n.IP\nc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w writer
			w.textIn(tc.in, tc.para)
			if got := w.b.String(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A page has its header, NAME line (what whatis and mandb read) and
// sections in order.
func TestRoff(t *testing.T) {
	p := &Page{
		Name: "qfoo", Section: 1, Summary: "do foo",
		Synopsis:    []string{"qfoo [-x] ID..."},
		Description: "Does foo.",
		Options:     []Entry{{Tag: "-x", Text: "extra"}},
		Commands:    []Command{{Path: "qfoo bar", Usage: "bar it", Synopsis: []string{"qfoo bar"}}},
		Sections:    []Section{{Title: "CONTROLLER", Text: "How."}},
		SeeAlso:     []string{"qbar(1)", "sharq.toml(5)"},
	}
	got := string(p.Roff())
	var last int
	for _, want := range []string{
		`.TH "QFOO" "1" "" "sharq" "sharq Commands"`,
		".SH \"NAME\"\nqfoo \\- do foo\n",
		".SH \"SYNOPSIS\"\n.nf\nqfoo [\\-x] ID...\n.fi\n",
		".SH \"DESCRIPTION\"\nDoes foo.\n",
		".SH \"OPTIONS\"\n.TP\n\\fB\\-x\\fR\nextra\n",
		".SH \"COMMANDS\"\n.SS \"qfoo bar\"\n",
		".SH \"CONTROLLER\"\nHow.\n",
		".SH \"SEE ALSO\"\n.BR \"qbar\" \"(1),\"\n.BR \"sharq.toml\" \"(5)\"\n",
	} {
		i := strings.Index(got[last:], want)
		if i < 0 {
			t.Fatalf("missing or out of order: %q\nin:\n%s", want, got)
		}
		last += i + len(want)
	}
	if p.FileName() != "qfoo.1" || p.Ref() != "qfoo(1)" {
		t.Errorf("FileName %q, Ref %q", p.FileName(), p.Ref())
	}
}
