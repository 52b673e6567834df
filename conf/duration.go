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

// ParseDuration parses a non-negative duration in any of these forms, the
// one parser for configuration files and for qsub's walltime= and grace=:
//   - Go syntax with "d" (24h) as an extra unit: "90s", "1h30m", "7d", "1d12h";
//   - PBS walltime: "[[DD:]HH:]MM:SS", fields after the first below 60 and
//     hours below 24 when days are given ("12:00:00", "1:00:00:00");
//   - a bare integer number of seconds: "3600".
//
// Signs are refused ("-5m" is negative, "+5m" is not a duration). Every error
// wraps ErrDuration and quotes s.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrDuration, s, why)
	}
	if t == "" {
		return bad(`empty (want e.g. "90s", "1h30m", "7d", "3600" or "01:30:00")`)
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
	var days time.Duration
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
		if t[j:k] != "d" {
			rest.WriteString(t[i:k])
			i = k
			continue
		}
		num := t[i:j]
		if strings.Count(num, ".") > 1 || strings.Trim(num, ".") == "" {
			return bad("bad number " + strconv.Quote(num))
		}
		// Exact decimal arithmetic: num days are 24 times num hours.
		h, err := time.ParseDuration(num + "h")
		if err != nil || h > (math.MaxInt64-days)/24 {
			return bad("too large")
		}
		days += 24 * h
		i = k
	}
	var d time.Duration
	if rest.Len() > 0 {
		var err error
		if d, err = time.ParseDuration(rest.String()); err != nil {
			return bad(strings.TrimPrefix(err.Error(), "time: "))
		}
	}
	if d > math.MaxInt64-days {
		return bad("too large")
	}
	return d + days, nil
}

// parseClock parses [[[DD:]HH:]MM:]SS; the first field is not bounded.
func parseClock(t string, bad func(string) (time.Duration, error)) (time.Duration, error) {
	fields := strings.Split(t, ":")
	if len(fields) > 4 {
		return bad("too many fields; want [[DD:]HH:]MM:SS")
	}
	// from the right: seconds, minutes, hours (bounded only below days)
	units := [...]int64{1, 60, 3600, 86400}
	limits := [...]int64{60, 60, 24}
	whys := [...]string{"seconds must be below 60", "minutes must be below 60", "hours must be below 24 when days are given"}
	const maxSeconds = math.MaxInt64 / int64(time.Second)
	var total int64
	for i := range fields {
		f := fields[len(fields)-1-i]
		if !allDigits(f) {
			return bad("want [[DD:]HH:]MM:SS or a number of seconds")
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return bad("too large")
		}
		if i < len(fields)-1 && v >= limits[i] {
			return bad(fmt.Sprintf("field %q out of range: %s", f, whys[i]))
		}
		if v > (maxSeconds-total)/units[i] {
			return bad("too large")
		}
		total += v * units[i]
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
