package conf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrHostlist is wrapped by every ExpandHostlist error.
var ErrHostlist = errors.New("bad hostlist")

// MaxHostlistNames bounds what one hostlist may expand to.
const MaxHostlistNames = 1 << 16

// ExpandHostlist expands Slurm hostlist syntax: a comma-separated list of
// names, each of which may hold bracket groups of numbers and ranges. A
// range keeps the width of its lower bound, so "gpu[01-03]" gives gpu01,
// gpu02, gpu03 and "n[9-10]" gives n9, n10. Several groups give their
// product: "r[1-2]n[1-2]" is r1n1, r1n2, r2n1, r2n2. Blanks around the
// list's entries are ignored. Names keep the order of the list; duplicates
// are kept (callers that need unique names check for them). An empty or
// blank string gives no names. Names may hold any printable ASCII but
// blanks, '[', ']' and ',' (device paths such as "/dev/nvidia[0-7]" are
// hostlists too).
func ExpandHostlist(s string) ([]string, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrHostlist, s, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var entries []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			if depth > 0 {
				return nil, bad("nested '[' at offset %d", i)
			}
			depth++
		case ']':
			if depth == 0 {
				return nil, bad("']' without '[' at offset %d", i)
			}
			depth--
		case ',':
			if depth == 0 {
				entries = append(entries, s[start:i])
				start = i + 1
			}
		}
	}
	if depth > 0 {
		return nil, bad("missing ']'")
	}
	entries = append(entries, s[start:])

	var names []string
	for _, e := range entries {
		e = strings.Trim(e, " \t")
		if e == "" {
			return nil, bad("empty entry")
		}
		got, err := expandEntry(e, MaxHostlistNames-len(names))
		if err != "" {
			return nil, bad("%s", err)
		}
		names = append(names, got...)
	}
	return names, nil
}

// hostRange is lo..hi, printed zero-padded to width.
type hostRange struct {
	lo, hi uint64
	width  int
}

// expandEntry expands one entry of a hostlist into at most limit names; it
// returns why the entry is malformed, or "".
func expandEntry(e string, limit int) ([]string, string) {
	// Split into literal parts and bracket groups: parts[0] group[0] parts[1] ...
	var parts []string
	var groups [][]hostRange
	count := 1
	rest := e
	for {
		i := strings.IndexByte(rest, '[')
		if i < 0 {
			parts = append(parts, rest)
			break
		}
		j := strings.IndexByte(rest, ']') // ExpandHostlist checked it is there
		parts = append(parts, rest[:i])
		g, why := parseGroup(rest[i+1 : j])
		if why != "" {
			return nil, why
		}
		n := 0
		for _, r := range g {
			n += int(r.hi - r.lo + 1) // parseGroup keeps each range small
			if n > limit {
				return nil, fmt.Sprintf("expands to more than %d names", MaxHostlistNames)
			}
		}
		if count > limit/n {
			return nil, fmt.Sprintf("expands to more than %d names", MaxHostlistNames)
		}
		count *= n
		groups = append(groups, g)
		rest = rest[j+1:]
	}
	for _, p := range parts {
		for k := 0; k < len(p); k++ {
			if c := p[k]; c <= ' ' || c >= 0x7f {
				return nil, fmt.Sprintf("bad character %q in %q", c, e)
			}
		}
	}
	if count > limit {
		return nil, fmt.Sprintf("expands to more than %d names", MaxHostlistNames)
	}
	if len(groups) == 0 {
		return []string{e}, ""
	}
	names := []string{parts[0]}
	for gi, g := range groups {
		next := make([]string, 0, len(names)*8)
		for _, prefix := range names {
			for _, r := range g {
				for v := r.lo; ; v++ {
					next = append(next, prefix+padNum(v, r.width)+parts[gi+1])
					if v == r.hi {
						break
					}
				}
			}
		}
		names = next
	}
	return names, ""
}

// parseGroup parses the inside of a bracket group: "1-3,7,09-12".
func parseGroup(g string) ([]hostRange, string) {
	if g == "" {
		return nil, "empty brackets"
	}
	var out []hostRange
	for _, item := range strings.Split(g, ",") {
		item = strings.Trim(item, " \t")
		loS, hiS, isRange := strings.Cut(item, "-")
		lo, ok := parseDigits(loS)
		if !ok {
			return nil, fmt.Sprintf("bad number %q in brackets", loS)
		}
		hi := lo
		if isRange {
			if hi, ok = parseDigits(hiS); !ok {
				return nil, fmt.Sprintf("bad number %q in brackets", hiS)
			}
			if hi < lo {
				return nil, fmt.Sprintf("range %q is reversed", item)
			}
			if hi-lo >= MaxHostlistNames {
				return nil, fmt.Sprintf("expands to more than %d names", MaxHostlistNames)
			}
		}
		out = append(out, hostRange{lo: lo, hi: hi, width: len(loS)})
	}
	return out, ""
}

// parseDigits parses 1 to 18 decimal digits.
func parseDigits(s string) (uint64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

func padNum(v uint64, width int) string {
	s := strconv.FormatUint(v, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// CompressHostlist writes names in hostlist syntax, for display: runs of
// names that differ only in their last number are bracketed, and
// consecutive numbers become ranges ("gpu[01-03,07]"). It keeps the order
// of names (sort them first for a canonical form), so for names that
// ExpandHostlist can give, ExpandHostlist(CompressHostlist(names)) returns
// names again.
func CompressHostlist(names []string) string {
	var b strings.Builder
	for i := 0; i < len(names); {
		pre, num, suf := splitLastNumber(names[i])
		j := i + 1
		if num != "" {
			for j < len(names) {
				p2, n2, s2 := splitLastNumber(names[j])
				if n2 == "" || p2 != pre || s2 != suf {
					break
				}
				j++
			}
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i+1 {
			b.WriteString(names[i])
			i = j
			continue
		}
		b.WriteString(pre)
		b.WriteByte('[')
		writeRanges(&b, names[i:j], len(pre), len(suf))
		b.WriteByte(']')
		b.WriteString(suf)
		i = j
	}
	return b.String()
}

// writeRanges writes the numbers of names (all sharing a prefix of preLen
// and a suffix of sufLen bytes) as comma-separated ranges.
func writeRanges(b *strings.Builder, names []string, preLen, sufLen int) {
	nums := make([]string, len(names))
	for i, n := range names {
		nums[i] = n[preLen : len(n)-sufLen]
	}
	for i := 0; i < len(nums); {
		lo := nums[i]
		v, _ := strconv.ParseUint(lo, 10, 64)
		j := i + 1
		for j < len(nums) && v < 1<<63 && padNum(v+1, len(lo)) == nums[j] {
			v++
			j++
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(lo)
		if j > i+1 {
			b.WriteByte('-')
			b.WriteString(nums[j-1])
		}
		i = j
	}
}

// splitLastNumber splits name around its last run of digits; num is "" when
// there is none, or when it is too long to bracket.
func splitLastNumber(name string) (pre, num, suf string) {
	end := len(name)
	for end > 0 && !isDigit(name[end-1]) {
		end--
	}
	start := end
	for start > 0 && isDigit(name[start-1]) {
		start--
	}
	if start == end || end-start > 18 {
		return name, "", ""
	}
	return name[:start], name[start:end], name[end:]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
