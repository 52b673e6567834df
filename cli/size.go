package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrBadSize is wrapped by every size parsing error.
var ErrBadSize = errors.New("bad size")

var sizeUnits = []struct {
	suffix string
	shift  uint
}{
	{"tb", 40}, {"gb", 30}, {"mb", 20}, {"kb", 10},
	{"t", 40}, {"g", 30}, {"m", 20}, {"k", 10},
	{"b", 0},
}

// ParseSize parses a PBS size: an integer followed by an optional unit b, kb,
// mb, gb or tb (powers of 1024, any case; k, m, g, t are accepted too). No
// unit means bytes, as in PBS.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	shift := uint(0)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSuffix(t, u.suffix), u.shift
			break
		}
	}
	if t == "" || t[0] == '+' || t[0] == '-' {
		return 0, fmt.Errorf("%w %q: want a number with an optional unit b, kb, mb, gb, tb (e.g. 64gb)", ErrBadSize, s)
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want a number with an optional unit b, kb, mb, gb, tb (e.g. 64gb)", ErrBadSize, s)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%w %q: too large", ErrBadSize, s)
	}
	return n << shift, nil
}

// FormatSize writes n bytes in the largest PBS unit that divides it exactly
// (64gb, 1536mb, 100b).
func FormatSize(n int64) string {
	if n == 0 {
		return "0b"
	}
	for _, u := range []struct {
		s     string
		shift uint
	}{{"tb", 40}, {"gb", 30}, {"mb", 20}, {"kb", 10}} {
		if n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "b"
}

// formatSizeShort writes n in at most about six characters, rounding to the
// largest unit it reaches (for qstat -a's Memory column).
func formatSizeShort(n int64) string {
	if n <= 0 {
		return "--"
	}
	for _, u := range []struct {
		s     string
		shift uint
	}{{"tb", 40}, {"gb", 30}, {"mb", 20}, {"kb", 10}} {
		if n >= 1<<u.shift {
			v := float64(n) / float64(int64(1)<<u.shift)
			if v == math.Trunc(v) || v >= 100 {
				return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + u.s
			}
			return strconv.FormatFloat(v, 'f', 1, 64) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "b"
}
