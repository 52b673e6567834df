package conf

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one mistake in a configuration file.
type Problem struct {
	File string
	Line int // 1-based; 0 when the mistake has no place in the file
	Col  int // 1-based byte column; 0 when unknown
	Msg  string
}

// Error gives "file:line:col: msg", leaving out the column (and the line)
// when it is unknown.
func (p Problem) Error() string {
	switch {
	case p.Line <= 0:
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	case p.Col <= 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
	}
}

// Problems is every mistake found in a configuration file, in file order.
// Load and Parse return it as their error when the file is invalid; use
// errors.As to get at the individual problems.
type Problems []Problem

// Error gives one problem per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// sortProblems orders problems by line and column, keeping the order in
// which they were found for problems at the same place.
func sortProblems(ps Problems) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Col < ps[j].Col
	})
}
