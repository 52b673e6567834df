package cli

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadDirective is wrapped by every #PBS directive parsing error.
var ErrBadDirective = errors.New("bad directive")

// DefaultDirectivePrefix starts a directive line (PBS_DPREFIX or qsub -C
// change it).
const DefaultDirectivePrefix = "#PBS"

// Directive is one directive line of a job script: its options, split as a
// shell would split them.
type Directive struct {
	Line int // 1-based
	Args []string
}

// ParseDirectives returns the directives at the top of a job script, as PBS
// reads them: after an optional #! line, directive lines (prefix, then
// blanks or the end of the line) and other comments and blank lines are
// read until the first line of anything else; directives after it are
// ignored. In a directive, an unquoted word starting with # begins a
// comment. An empty prefix means no directives.
func ParseDirectives(script, prefix string) ([]Directive, error) {
	if prefix == "" {
		return nil, nil
	}
	var out []Directive
	for i, line := range strings.Split(script, "\n") {
		line = strings.TrimSuffix(line, "\r")
		trimmed := strings.TrimLeft(line, " \t")
		if i == 0 && strings.HasPrefix(trimmed, "#!") {
			continue
		}
		if trimmed == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(trimmed, prefix); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			args, err := splitWords(rest)
			if err != nil {
				return nil, fmt.Errorf("%w on line %d: %w", ErrBadDirective, i+1, err)
			}
			if len(args) > 0 {
				out = append(out, Directive{Line: i + 1, Args: args})
			}
			continue
		}
		if trimmed[0] == '#' {
			continue
		}
		break
	}
	return out, nil
}

// splitWords splits s like a shell would, without expansions: blanks
// separate words, single quotes keep everything, double quotes keep all but
// \" and \\, a backslash outside quotes escapes the next character, and an
// unquoted word starting with # comments out the rest.
func splitWords(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
