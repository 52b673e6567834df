package conf

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// loader collects the problems of one file.
type loader struct {
	file  string
	data  string     // the document, for positions
	pos   *positions // scanned from data on the first problem or line asked for
	probs Problems
	warns Problems // not errors: the configuration loads, the controller logs them
	// From [cluster], for the blocks read after it.
	clusterMounts  []Mount
	checkpointRoot string
}

// add records a problem at path (or its nearest ancestor with a position).
func (l *loader) add(path []string, format string, args ...any) {
	p := l.positions().find(path)
	l.probs = append(l.probs, Problem{File: l.file, Line: p.line, Col: p.col, Msg: fmt.Sprintf(format, args...)})
}

// positions returns the document's key positions, scanning it the first
// time (a file without problems never needs them).
func (l *loader) positions() *positions {
	if l.pos == nil {
		l.pos = scanPositions(l.data)
	}
	return l.pos
}

// table reads one TOML table, reporting wrong types at the key, and
// remembers which keys were read so that the rest can be reported as
// unknown.
type table struct {
	l    *loader
	path []string
	ctx  string // for messages: `cluster`, `share "vision"`
	m    map[string]any
	used map[string]bool
}

func (l *loader) table(path []string, ctx string, m map[string]any) *table {
	if m == nil {
		m = map[string]any{}
	}
	return &table{l: l, path: path, ctx: ctx, m: m, used: map[string]bool{}}
}

func (t *table) keyPath(key string) []string {
	if key == "" {
		return t.path
	}
	return append(append([]string(nil), t.path...), key)
}

// line is the line of key (or of the table).
func (t *table) line(key string) int { return t.l.positions().find(t.keyPath(key)).line }

// errf reports a problem with key, at key (at the table when key is
// absent from it); the message starts with the table's context and key.
func (t *table) errf(key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if key != "" {
		msg = key + ": " + msg
	}
	t.errAt(key, "%s", msg)
}

// warnf records a warning at key (see Config.Warnings).
func (t *table) warnf(key, format string, args ...any) {
	msg := key + ": " + fmt.Sprintf(format, args...)
	if t.ctx != "" {
		msg = t.ctx + ": " + msg
	}
	p := t.l.positions().find(t.keyPath(key))
	t.l.warns = append(t.l.warns, Problem{File: t.l.file, Line: p.line, Col: p.col, Msg: msg})
}

// errAt reports a problem at key; the message starts with the table's
// context only.
func (t *table) errAt(key, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if t.ctx != "" {
		msg = t.ctx + ": " + msg
	}
	t.l.add(t.keyPath(key), "%s", msg)
}

// has reports whether key is in the table (marking it read).
func (t *table) has(key string) bool {
	_, ok := t.m[key]
	t.used[key] = true
	return ok
}

// get returns key's raw value.
func (t *table) get(key string) (any, bool) {
	v, ok := t.m[key]
	t.used[key] = true
	return v, ok
}

func (t *table) wrongType(key, want string, v any) {
	t.errf(key, "want %s, got %s", want, describe(v))
}

// str returns a string value; ok is false when absent or of another type.
func (t *table) str(key string) (string, bool) {
	v, present := t.get(key)
	if !present {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		t.wrongType(key, "a string", v)
	}
	return s, ok
}

// strDefault returns a string value or def.
func (t *table) strDefault(key, def string) string {
	if s, ok := t.str(key); ok {
		return s
	}
	return def
}

// integer returns an int value in [-2^31, 2^31).
func (t *table) integer(key string) (int, bool) {
	v, present := t.get(key)
	if !present {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok {
		t.wrongType(key, "an integer", v)
		return 0, false
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		t.errf(key, "%d is out of range", n)
		return 0, false
	}
	return int(n), true
}

func (t *table) boolean(key string) (bool, bool) {
	v, present := t.get(key)
	if !present {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		t.wrongType(key, "true or false", v)
	}
	return b, ok
}

// strings returns an array of strings.
func (t *table) strings(key string) ([]string, bool) {
	v, present := t.get(key)
	if !present {
		return nil, false
	}
	arr, ok := v.([]any)
	if !ok {
		t.wrongType(key, "an array of strings", v)
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			t.errf(key, "element %d: want a string, got %s", i+1, describe(e))
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// duration returns a duration given as a string (see ParseDuration).
func (t *table) duration(key string, def time.Duration) (time.Duration, bool) {
	s, ok := t.str(key)
	if !ok {
		return def, false
	}
	d, err := ParseDuration(s)
	if err != nil {
		t.errf(key, "%v", err)
		return def, false
	}
	return d, true
}

// size returns a size given as a string (see ParseSize) or an integer.
func (t *table) size(key string) (int64, bool) {
	v, present := t.get(key)
	if !present {
		return 0, false
	}
	switch v := v.(type) {
	case int64:
		if v < 0 {
			t.errf(key, "must not be negative")
			return 0, false
		}
		return v, true
	case string:
		n, err := ParseSize(v)
		if err != nil {
			t.errf(key, "%v", err)
			return 0, false
		}
		return n, true
	}
	t.wrongType(key, `a size such as "64gb"`, v)
	return 0, false
}

// subtable returns a table-valued key, or nil when absent or not a table.
func (t *table) subtable(key, ctx string) *table {
	v, present := t.get(key)
	if !present {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.l.add(t.keyPath(key), "%s must be a table ([%s]), not %s", key, key, describe(v))
		return nil
	}
	return t.l.table(t.keyPath(key), ctx, m)
}

// tables returns the elements of an array of tables; element i has path
// key, "#i".
func (t *table) tables(key string) []*table {
	v, present := t.get(key)
	if !present {
		return nil
	}
	var ms []map[string]any
	switch v := v.(type) {
	case []map[string]any:
		ms = v
	case []any:
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				t.l.add(t.keyPath(key), "%s must be an array of tables ([[%s]]), not an array holding %s", key, key, describe(e))
				return nil
			}
			ms = append(ms, m)
		}
	default:
		t.l.add(t.keyPath(key), "%s must be an array of tables ([[%s]]), not %s", key, key, describe(v))
		return nil
	}
	out := make([]*table, len(ms))
	for i, m := range ms {
		out[i] = t.l.table(append(t.keyPath(key), "#"+strconv.Itoa(i)), fmt.Sprintf("%s #%d", key, i+1), m)
	}
	return out
}

// unknown reports every key that was not read, suggesting a known key
// when one is close.
func (t *table) unknown(known ...string) {
	var keys []string
	for k := range t.m {
		if !t.used[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		msg := "unknown key " + quote(k)
		if s := suggest(k, known); s != "" {
			msg += " (did you mean " + quote(s) + "?)"
		}
		t.errAt(k, "%s", msg)
	}
}

// suggest returns the known word closest to k, if it is close enough to be
// a typo.
func suggest(k string, known []string) string {
	best, bestD := "", 3
	for _, w := range known {
		if d := editDistance(k, w); d < bestD {
			best, bestD = w, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt32
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// describe names a decoded TOML value's type for messages.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		return "string " + quote(v)
	case int64:
		return "integer " + strconv.FormatInt(v, 10)
	case float64:
		return "float " + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case time.Time:
		return "datetime"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

func quote(s string) string { return strconv.Quote(s) }
