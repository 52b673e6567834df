package conf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSize is wrapped by every ParseSize error.
var ErrSize = errors.New("bad size")

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
	"p": 1 << 50, "pb": 1 << 50, "pib": 1 << 50,
}

// ParseSize parses a size in bytes: a non-negative integer with an optional
// unit, as PBS writes them (qsub -l mem=64gb); it is the one parser for
// configuration files and for qsub's and qalter's mem=. Units are b, kb, mb, gb, tb
// and pb, also written k, m, g, t, p or KiB, MiB, GiB, TiB, PiB, in any
// case; all are powers of 1024 as in PBS ("1kb" is 1024). No unit means
// bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w %q: want a whole number of bytes with an optional unit b, kb, mb, gb, tb, pb (e.g. 64gb)", ErrSize, s)
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%w %q: unknown unit %q (want b, kb, mb, gb, tb, pb or KiB..PiB)", ErrSize, s, strings.TrimSpace(t[i:]))
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%w %q: too large", ErrSize, s)
	}
	return n * unit, nil
}

// FormatSize writes n bytes with the largest PBS unit that divides it
// ("64gb", "1536mb", "1000b"); ParseSize reads it back.
func FormatSize(n int64) string {
	if n != 0 {
		for _, u := range [...]struct {
			name string
			size int64
		}{{"pb", 1 << 50}, {"tb", 1 << 40}, {"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}} {
			if n%u.size == 0 {
				return strconv.FormatInt(n/u.size, 10) + u.name
			}
		}
	}
	return strconv.FormatInt(n, 10) + "b"
}
