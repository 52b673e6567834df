package manpage

import (
	"strings"
)

// escape makes s safe as roff text: backslashes, hyphens (as ASCII
// minus, so that options copy and paste), quotes and backquotes as the
// ASCII characters, and a leading control character neutralised. A line
// may break after a comma that no space follows (a,b,c lists are long
// words).
func escape(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case ',':
			b.WriteByte(',')
			if i+1 < len(s) && s[i+1] != ' ' {
				b.WriteString(`\:`)
			}
		case '\\':
			b.WriteString(`\e`)
		case '-':
			b.WriteString(`\-`)
		case '\'':
			b.WriteString(`\(aq`)
		case '`':
			b.WriteString(`\(ga`)
		case '\t':
			b.WriteString("        ")
		default:
			if r < ' ' {
				continue // no control characters in a page
			}
			b.WriteRune(r)
		}
	}
	out := b.String()
	if strings.HasPrefix(out, ".") || strings.HasPrefix(out, "'") {
		out = `\&` + out
	}
	return out
}

// quoteArg makes s one argument of a macro line: escaped and in double
// quotes (a double quote inside as \(dq).
func quoteArg(s string) string {
	return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"`
}

// writer builds a page's roff source.
type writer struct{ b strings.Builder }

// macro writes a request line: .NAME args..., each argument quoted.
func (w *writer) macro(name string, args ...string) {
	w.b.WriteString("." + name)
	for _, a := range args {
		w.b.WriteString(" " + quoteArg(a))
	}
	w.b.WriteByte('\n')
}

// line writes one line of text (escaped; s holds no newline).
func (w *writer) line(s string) {
	w.b.WriteString(escape(s) + "\n")
}

// bold writes a line of bold text.
func (w *writer) bold(s string) {
	w.b.WriteString(`\fB` + escape(s) + `\fR` + "\n")
}

// text writes plain text as a help text is laid out: paragraphs apart at
// blank lines; in a paragraph, lines that start at the margin are filled,
// indented lines (examples, lists, tables) kept as they are, indented by
// how much they are indented beyond the least-indented of their run.
func (w *writer) text(s string) { w.textIn(s, "PP") }

// textIn is text with para as its paragraph macro: PP at the margin, IP
// in an entry's body (which keeps its indentation).
func (w *writer) textIn(s, para string) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	first := true
	for i := 0; i < len(lines); {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		if !first {
			w.macro(para)
		}
		first = false
		// One paragraph: until a blank line.
		afterBlock := false
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			if !indented(lines[i]) {
				if afterBlock && para != "PP" {
					w.macro(para) // back to the entry's indentation
				}
				afterBlock = false
				w.line(strings.TrimSpace(lines[i]))
				i++
				continue
			}
			afterBlock = true
			j := i
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" && indented(lines[j]) {
				j++
			}
			w.verbatim(lines[i:j], para != "PP")
			i = j
		}
	}
}

// verbatim writes lines unfilled, indented as a block, their common
// indentation removed; inEntry: in an entry's body, indented from its
// indentation (.RS alone moves the margin there).
func (w *writer) verbatim(lines []string, inEntry bool) {
	least := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if least < 0 || n < least {
			least = n
		}
	}
	if inEntry {
		w.macro("RS")
	}
	w.macro("RS", "4")
	w.macro("nf")
	for _, l := range lines {
		if len(l) >= least && least > 0 {
			l = l[least:]
		}
		w.line(strings.TrimRight(l, " \t"))
	}
	w.macro("fi")
	w.macro("RE")
	if inEntry {
		w.macro("RE")
	}
}

func indented(l string) bool { return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") }
