package conf

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
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

// ParseSize parses a size in bytes: a non-negative number with an optional
// unit, as PBS writes them (qsub -l mem=64gb); it is the one parser for
// configuration files and for qsub's and qalter's mem=. Units are b, kb, mb, gb, tb
// and pb, also written k, m, g, t, p or KiB, MiB, GiB, TiB, PiB, in any
// case; all are powers of 1024 as in PBS ("1kb" is 1024). No unit means
// bytes. The number may have a decimal fraction of up to maxSizeDecimals
// digits (1.5gb, or 2.0gb as Cromwell writes sizes); the size is rounded up
// to a whole byte.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	whole, frac := t[:i], ""
	if i < len(t) && t[i] == '.' {
		k := i + 1
		for k < len(t) && isDigit(t[k]) {
			k++
		}
		frac, i = t[i+1:k], k
		if frac == "" {
			i-- // "2.gb": the dot is not a fraction
			frac = ""
		}
	}
	if whole == "" {
		return 0, fmt.Errorf("%w %q: want a number of bytes with an optional unit b, kb, mb, gb, tb, pb (e.g. 64gb, 1.5gb)", ErrSize, s)
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%w %q: unknown unit %q (want b, kb, mb, gb, tb, pb or KiB..PiB)", ErrSize, s, strings.TrimSpace(t[i:]))
	}
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("%w %q: too large", ErrSize, s)
	}
	if frac == "" {
		return n * unit, nil
	}
	if len(frac) > maxSizeDecimals {
		return 0, fmt.Errorf("%w %q: at most %d decimals", ErrSize, s, maxSizeDecimals)
	}
	// frac/10^len(frac) of a unit, rounded up: exact in 128 bits.
	f, _ := strconv.ParseUint(frac, 10, 64)
	den := uint64(1)
	for range len(frac) {
		den *= 10
	}
	hi, lo := bits.Mul64(f, uint64(unit))
	q, r := bits.Div64(hi, lo, den) // hi < den: f < den
	if r != 0 {
		q++
	}
	if q > uint64(math.MaxInt64-n*unit) {
		return 0, fmt.Errorf("%w %q: too large", ErrSize, s)
	}
	return n*unit + int64(q), nil
}

// maxSizeDecimals bounds a size's decimal fraction: 10^18 still fits in
// 64 bits.
const maxSizeDecimals = 18

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
