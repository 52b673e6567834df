package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ANSI styles for terminal output.
const (
	styleBold   = "1"
	styleDim    = "2"
	styleRed    = "31"
	styleGreen  = "32"
	styleYellow = "33"
	styleBlue   = "34"
	styleMag    = "35"
	styleCyan   = "36"
)

func paint(s, style string) string {
	if style == "" || s == "" {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

// column is one table column. Head holds its header lines, bottom-aligned
// across columns. Width is the fixed (PBS) width used in plain output;
// Trunc cuts longer values there with a trailing "*", as PBS does.
type column struct {
	Head  []string
	Width int
	Right bool
	Trunc bool
	Sep   string // before the next column; default one space
}

// cell is one value; Style colours it on a colour terminal. Raw, when set,
// is printed instead of Text in colour mode (Text still gives the width).
type cell struct {
	Text  string
	Style string
	Raw   string
}

// table renders rows under PBS-style headers with a dashed rule.
type table struct {
	Cols []column
	Rows [][]cell
	// Fit sizes columns to their contents (terminal); otherwise the fixed
	// widths are used, and output is stable for scripts.
	Fit   bool
	Color bool
	// After, when set, is printed after each row (qstat -n's node line),
	// or at the end of the row's own line with Inline (qstat -1).
	After  []string
	Inline bool
	// Wide never cuts a value short: a column is as wide as its widest
	// value, and never narrower than its fixed width (qstat -w).
	Wide bool
}

func width(s string) int { return utf8.RuneCountInString(s) }

func (t *table) widths() []int {
	w := make([]int, len(t.Cols))
	for i, c := range t.Cols {
		if !t.Fit && !t.Wide {
			w[i] = c.Width
			continue
		}
		if t.Wide && !t.Fit {
			w[i] = c.Width
		}
		for _, h := range c.Head {
			w[i] = max(w[i], width(h))
		}
		for _, r := range t.Rows {
			w[i] = max(w[i], width(printable(r[i].Text)))
		}
	}
	return w
}

func (t *table) render(out io.Writer) error {
	w := t.widths()
	b := make([]byte, 0, 64*(len(t.Rows)+3))
	lines := 0
	for _, c := range t.Cols {
		lines = max(lines, len(c.Head))
	}
	for l := 0; l < lines; l++ {
		row := make([]cell, len(t.Cols))
		for i, c := range t.Cols {
			if k := l - (lines - len(c.Head)); k >= 0 {
				row[i] = cell{Text: c.Head[k]}
			}
		}
		b = t.line(b, w, row, styleBold, false)
	}
	rule := make([]cell, len(t.Cols))
	for i := range t.Cols {
		rule[i] = cell{Text: strings.Repeat("-", w[i])}
	}
	b = t.line(b, w, rule, "", false)
	for i, r := range t.Rows {
		b = t.line(b, w, r, "", true)
		if i < len(t.After) && t.After[i] != "" {
			if t.Inline {
				b = append(b[:len(b)-1], ' ')
			}
			b = append(b, t.After[i]...)
			b = append(b, '\n')
		}
	}
	_, err := out.Write(b)
	return err
}

// line appends one row. It is on the path of qstat over every job of a
// cluster, so it appends into one buffer rather than building strings.
func (t *table) line(b []byte, w []int, row []cell, rowStyle string, trunc bool) []byte {
	start := len(b)
	for i, c := range t.Cols {
		text := printable(row[i].Text)
		tw := width(text)
		if trunc && !t.Fit && !t.Wide && c.Trunc && tw > w[i] {
			r := []rune(text)
			text = string(r[:max(w[i]-1, 0)]) + "*"
			tw = w[i]
		}
		pad := max(w[i]-tw, 0)
		last := i == len(t.Cols)-1
		shown := text
		if t.Color {
			if row[i].Raw != "" {
				shown = row[i].Raw
			} else {
				style := row[i].Style
				if style == "" {
					style = rowStyle
				}
				shown = paint(text, style)
			}
		}
		switch {
		case c.Right:
			b = appendSpaces(b, pad)
			b = append(b, shown...)
		case last:
			b = append(b, shown...)
		default:
			b = append(b, shown...)
			b = appendSpaces(b, pad)
		}
		if !last {
			if c.Sep == "" {
				b = append(b, ' ')
			} else {
				b = append(b, c.Sep...)
			}
		}
	}
	for len(b) > start && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return append(b, '\n')
}

func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

func compressInts(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		} else {
			parts = append(parts, fmt.Sprint(xs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
