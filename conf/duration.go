package conf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrDuration is wrapped by every ParseDuration error.
var ErrDuration = errors.New("bad duration")

// ParseDuration parses a non-negative duration in any of these forms:
//   - Go syntax with "d" (24h) as an extra unit: "90s", "1h30m", "7d", "1d12h";
//   - PBS walltime: "HH:MM:SS", "MM:SS" (fields past the first below 60);
//   - a bare integer number of seconds: "3600".
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrDuration, s, why)
	}
	if t == "" {
		return bad(`empty (want e.g. "90s", "1h30m", "7d" or "01:30:00")`)
	}
	if t[0] == '-' {
		return bad("negative")
	}
	if strings.Contains(t, ":") {
		return parseClock(t, bad)
	}
	if allDigits(t) {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n > math.MaxInt64/int64(time.Second) {
			return bad("too large")
		}
		return time.Duration(n) * time.Second, nil
	}
	// Take "<number>d" terms out and hand the rest to time.ParseDuration.
	var days float64
	var rest strings.Builder
	for i := 0; i < len(t); {
		j := i
		for j < len(t) && (isDigit(t[j]) || t[j] == '.') {
			j++
		}
		k := j
		for k < len(t) && !isDigit(t[k]) && t[k] != '.' {
			k++
		}
		if j == i || k == j {
			return bad(`want a number followed by a unit: d, h, m, s, ms, us, ns`)
		}
		if t[j:k] == "d" {
			v, err := strconv.ParseFloat(t[i:j], 64)
			if err != nil {
				return bad("bad number " + strconv.Quote(t[i:j]))
			}
			days += v
		} else {
			rest.WriteString(t[i:k])
		}
		i = k
	}
	var d time.Duration
	if rest.Len() > 0 {
		var err error
		if d, err = time.ParseDuration(rest.String()); err != nil {
			return bad(strings.TrimPrefix(err.Error(), "time: "))
		}
	}
	extra := days * float64(24*time.Hour)
	if extra >= float64(math.MaxInt64)-float64(d) {
		return bad("too large")
	}
	return d + time.Duration(extra), nil
}

// parseClock parses [[HH:]MM:]SS.
func parseClock(t string, bad func(string) (time.Duration, error)) (time.Duration, error) {
	fields := strings.Split(t, ":")
	if len(fields) > 3 {
		return bad("want HH:MM:SS")
	}
	var total int64
	for i, f := range fields {
		if !allDigits(f) || len(f) > 12 {
			return bad("want HH:MM:SS")
		}
		v, _ := strconv.ParseInt(f, 10, 64)
		if i > 0 && v >= 60 {
			return bad("minutes and seconds must be below 60")
		}
		total = total*60 + v
	}
	if total > math.MaxInt64/int64(time.Second) {
		return bad("too large")
	}
	return time.Duration(total) * time.Second, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}
