package conf

import (
	"sort"
	"strconv"
	"strings"
)

// A path names a place in the document: table and key names, with "#i"
// for element i of an array of tables ("partition", "#2", "nodes").
// pathKey joins a path into a map key.
func pathKey(path []string) string { return strings.Join(path, "\x1f") }

// position is a 1-based line and byte column.
type position struct{ line, col int }

// positions maps paths to where they are defined in the document: keys to
// the start of the key, tables and array-of-table elements to their header.
// BurntSushi/toml does not expose positions per array element, so the
// document is scanned again here. The scan assumes a document the TOML
// parser has accepted; on anything else it stops early and never panics.
type positions struct {
	at    map[string]position
	lines []int // byte offset where each line starts
}

// find returns the position of path, or of its nearest ancestor that has
// one (keys inside inline tables report the inline table's key), or the
// zero position.
func (p *positions) find(path []string) position {
	for n := len(path); n > 0; n-- {
		if pos, ok := p.at[pathKey(path[:n])]; ok {
			return pos
		}
	}
	return position{}
}

func (p *positions) posOf(off int) position {
	line := sort.Search(len(p.lines), func(i int) bool { return p.lines[i] > off })
	return position{line: line, col: off - p.lines[line-1] + 1}
}

func (p *positions) record(path []string, off int) {
	k := pathKey(path)
	if _, ok := p.at[k]; !ok {
		p.at[k] = p.posOf(off)
	}
}

// scanPositions indexes the keys and table headers of a TOML document.
func scanPositions(data string) *positions {
	p := &positions{at: map[string]position{}, lines: []int{0}}
	for i := 0; i < len(data); i++ {
		if data[i] == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	s := &scanner{data: data, pos: p, arrays: map[string]int{}}
	if strings.HasPrefix(data, "\xef\xbb\xbf") {
		s.i = 3
	}
	s.run()
	return p
}

type scanner struct {
	data   string
	i      int
	pos    *positions
	cur    []string       // the current table
	arrays map[string]int // element counts of arrays of tables, by resolved path
}

func (s *scanner) eof() bool { return s.i >= len(s.data) }

func (s *scanner) run() {
	for {
		s.skipSpace(true)
		if s.eof() {
			return
		}
		switch s.data[s.i] {
		case '[':
			if !s.header() {
				return
			}
		default:
			if !s.keyValue(s.cur) {
				return
			}
		}
	}
}

// header reads "[a.b]" or "[[a.b]]" and makes it the current table.
func (s *scanner) header() bool {
	start := s.i
	s.i++
	array := !s.eof() && s.data[s.i] == '['
	if array {
		s.i++
	}
	s.skipSpace(false)
	key, ok := s.key()
	if !ok || s.eof() || s.data[s.i] != ']' {
		return false
	}
	s.i++
	if array {
		if s.eof() || s.data[s.i] != ']' {
			return false
		}
		s.i++
	}
	// Resolve every prefix through the arrays of tables it names.
	var path []string
	for n, k := range key {
		path = append(path, k)
		c, isArray := s.arrays[pathKey(path)]
		last := n == len(key)-1
		if last && array {
			s.pos.record(path, start)
			s.arrays[pathKey(path)] = c + 1
			path = append(path, "#"+strconv.Itoa(c))
		} else if isArray && c > 0 {
			path = append(path, "#"+strconv.Itoa(c-1))
		}
		s.pos.record(path, start)
	}
	s.cur = path
	return true
}

// key reads a dotted key and the blanks after it.
func (s *scanner) key() ([]string, bool) {
	var key []string
	for {
		s.skipSpace(false)
		if s.eof() {
			return nil, false
		}
		var part string
		switch c := s.data[s.i]; {
		case c == '"' || c == '\'':
			start := s.i
			if !s.skipString() {
				return nil, false
			}
			raw := s.data[start:s.i]
			part = raw[1 : len(raw)-1]
			if c == '"' {
				if u, err := strconv.Unquote(raw); err == nil {
					part = u
				}
			}
		case isBareKeyChar(c):
			start := s.i
			for !s.eof() && isBareKeyChar(s.data[s.i]) {
				s.i++
			}
			part = s.data[start:s.i]
		default:
			return nil, false
		}
		key = append(key, part)
		s.skipSpace(false)
		if s.eof() || s.data[s.i] != '.' {
			return key, true
		}
		s.i++
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value skips the value of path: a string, an array, an inline table or a
// bare scalar. Keys inside inline tables and the inline tables inside
// arrays ("#i") are recorded too.
func (s *scanner) value(path []string) bool {
	if s.eof() {
		return false
	}
	switch s.data[s.i] {
	case '"', '\'':
		return s.skipString()
	case '[':
		return s.array(path)
	case '{':
		return s.inlineTable(path)
	default:
		for !s.eof() {
			switch s.data[s.i] {
			case '\n', '#', ',', ']', '}':
				return true
			}
			s.i++
		}
		return true
	}
}

func (s *scanner) array(path []string) bool {
	s.i++ // '['
	tables := 0
	for {
		s.skipSpace(true)
		if s.eof() {
			return false
		}
		switch s.data[s.i] {
		case ']':
			s.i++
			return true
		case ',':
			s.i++
			continue
		case '{':
			elem := append(append([]string(nil), path...), "#"+strconv.Itoa(tables))
			tables++
			s.pos.record(elem, s.i)
			if !s.inlineTable(elem) {
				return false
			}
		default:
			start := s.i
			if !s.value(nil) || s.i == start {
				return false
			}
		}
	}
}

func (s *scanner) inlineTable(path []string) bool {
	s.i++ // '{'
	for {
		s.skipSpace(true)
		if s.eof() {
			return false
		}
		switch s.data[s.i] {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			continue
		}
		if !s.keyValue(path) {
			return false
		}
	}
}

// keyValue reads "key = value" below path, recording the key.
func (s *scanner) keyValue(path []string) bool {
	start := s.i
	key, ok := s.key()
	if !ok || s.eof() || s.data[s.i] != '=' {
		return false
	}
	s.i++
	full := append(append([]string(nil), path...), key...)
	for n := len(path) + 1; n <= len(full); n++ {
		s.pos.record(full[:n], start)
	}
	s.skipSpace(false)
	return s.value(full)
}

// skipString skips a basic, literal or multi-line string starting at s.i.
func (s *scanner) skipString() bool {
	q := s.data[s.i]
	if strings.HasPrefix(s.data[s.i:], strings.Repeat(string(q), 3)) {
		s.i += 3
		for !s.eof() {
			if q == '"' && s.data[s.i] == '\\' {
				s.i += 2
				continue
			}
			if strings.HasPrefix(s.data[s.i:], strings.Repeat(string(q), 3)) {
				s.i += 3
				// Up to two more quotes belong to the content.
				for n := 0; n < 2 && !s.eof() && s.data[s.i] == q; n++ {
					s.i++
				}
				return true
			}
			s.i++
		}
		return false
	}
	s.i++
	for !s.eof() {
		switch c := s.data[s.i]; {
		case q == '"' && c == '\\':
			s.i += 2
			continue
		case c == q:
			s.i++
			return true
		case c == '\n':
			return false
		}
		s.i++
	}
	return false
}

func (s *scanner) skipComment() {
	for !s.eof() && s.data[s.i] != '\n' {
		s.i++
	}
}

// skipSpace skips blanks and comments, and newlines when newlines is set.
func (s *scanner) skipSpace(newlines bool) {
	for !s.eof() {
		switch s.data[s.i] {
		case ' ', '\t', '\r':
			s.i++
		case '\n':
			if !newlines {
				return
			}
			s.i++
		case '#':
			if !newlines {
				return
			}
			s.skipComment()
		default:
			return
		}
	}
}
