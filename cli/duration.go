package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrBadDuration is wrapped by every walltime or grace parsing error.
var ErrBadDuration = errors.New("bad duration")

// ParseDuration parses a PBS walltime: seconds ("3600"), mm:ss, hh:mm:ss or
// dd:hh:mm:ss (fields after the first below 60, hours below 24 when days are
// given); Go durations such as "90m" or "12h" are accepted too. Negative
// values are refused.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%w %q: %s", ErrBadDuration, s, why)
	}
	if t == "" {
		return bad("empty; want seconds, hh:mm:ss or a duration like 90m")
	}
	if strings.ContainsAny(t, "hmsuµn") && !strings.Contains(t, ":") {
		d, err := time.ParseDuration(t)
		if err != nil {
			return bad("want seconds, hh:mm:ss or a duration like 90m")
		}
		if d < 0 {
			return bad("negative")
		}
		return d, nil
	}
	fields := strings.Split(t, ":")
	if len(fields) > 4 {
		return bad("too many fields; want [[dd:]hh:]mm:ss or seconds")
	}
	// limits of each field, counted from the right: ss, mm, hh, dd
	limits := []int64{60, 60, 24}
	units := []int64{1, 60, 3600, 86400}
	var total int64
	for i := range fields {
		f := fields[len(fields)-1-i]
		if f == "" || f[0] == '+' || f[0] == '-' {
			return bad("want [[dd:]hh:]mm:ss or seconds")
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return bad("want [[dd:]hh:]mm:ss or seconds")
		}
		first := i == len(fields)-1
		if !first && v >= limits[i] {
			return bad(fmt.Sprintf("field %q out of range", f))
		}
		if v > (math.MaxInt64/int64(time.Second)-total)/units[i] {
			return bad("too large")
		}
		total += v * units[i]
	}
	return time.Duration(total) * time.Second, nil
}

// FormatHMS writes d as PBS does: hh:mm:ss, hours not wrapped at 24.
func FormatHMS(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// formatHM writes d as hh:mm (qstat -a's time columns), "--" for zero.
func formatHM(d time.Duration) string {
	if d <= 0 {
		return "--"
	}
	m := int64(d / time.Minute)
	return fmt.Sprintf("%02d:%02d", m/60, m%60)
}
