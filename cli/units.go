package cli

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Walltimes and sizes are parsed by conf.ParseDuration and conf.ParseSize
// and written back by conf.FormatSize and FormatHMS; this file holds only
// the display forms qstat needs on top of those.

// FormatHMS writes d as PBS does: hh:mm:ss, hours not wrapped at 24.
// conf.ParseDuration reads it back to the second.
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
