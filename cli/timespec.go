package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrBadTime is wrapped by every -a parsing error.
var ErrBadTime = errors.New("bad date-time")

// ParseDateTime parses qsub -a's [[[[CC]YY]MM]DD]hhmm[.SS] in loc. Parts
// left out are filled as PBS does: the earliest such time not before now (a
// bare hhmm already past today means tomorrow; a day past this month means
// next month; a date past this year means next year). With the year given,
// a time in the past is kept (the job is simply eligible at once). YY alone
// means 20YY.
func ParseDateTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	bad := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("%w %q: %s", ErrBadTime, s, why)
	}
	main, secs, hasSecs := strings.Cut(s, ".")
	if !allDigits(main) || len(main)%2 != 0 || len(main) < 4 || len(main) > 12 {
		return bad("want [[[[CC]YY]MM]DD]hhmm[.SS], e.g. 2330 or 202612311800")
	}
	sec := 0
	if hasSecs {
		if len(secs) != 2 || !allDigits(secs) {
			return bad("seconds must be two digits (.SS)")
		}
		sec, _ = strconv.Atoi(secs)
		if sec > 59 {
			return bad("seconds out of range")
		}
	}
	// two-digit fields from the right: mm hh DD MM YY CC
	var f []int
	for i := len(main); i > 0; i -= 2 {
		v, _ := strconv.Atoi(main[i-2 : i])
		f = append(f, v)
	}
	minute, hour := f[0], f[1]
	if hour > 23 {
		return bad("hour out of range")
	}
	if minute > 59 {
		return bad("minute out of range")
	}
	now = now.In(loc)
	valid := func(y int, m time.Month, d int) bool {
		t := time.Date(y, m, d, 0, 0, 0, 0, loc)
		return t.Year() == y && t.Month() == m && t.Day() == d
	}
	at := func(y int, m time.Month, d int) time.Time {
		return time.Date(y, m, d, hour, minute, sec, 0, loc)
	}
	switch len(f) {
	case 2: // hhmm
		t := at(now.Year(), now.Month(), now.Day())
		if t.Before(now) {
			t = at(now.Year(), now.Month(), now.Day()+1)
		}
		return t, nil
	case 3: // DDhhmm
		day := f[2]
		if day < 1 || day > 31 {
			return bad("day out of range")
		}
		for i := 0; i < 12; i++ {
			first := time.Date(now.Year(), now.Month()+time.Month(i), 1, 0, 0, 0, 0, loc)
			if !valid(first.Year(), first.Month(), day) {
				continue
			}
			if t := at(first.Year(), first.Month(), day); !t.Before(now) {
				return t, nil
			}
		}
		return bad("no such day in the coming months")
	case 4: // MMDDhhmm
		month, day := time.Month(f[3]), f[2]
		if month < 1 || month > 12 || day < 1 || day > 31 {
			return bad("month or day out of range")
		}
		for y := now.Year(); y < now.Year()+9; y++ {
			if !valid(y, month, day) {
				continue
			}
			if t := at(y, month, day); !t.Before(now) {
				return t, nil
			}
		}
		return bad("no such date")
	default: // YYMMDDhhmm, CCYYMMDDhhmm
		year := 2000 + f[4]
		if len(f) == 6 {
			year = f[5]*100 + f[4]
		}
		month, day := time.Month(f[3]), f[2]
		if month < 1 || month > 12 || !valid(year, month, day) {
			return bad("no such date")
		}
		return at(year, month, day), nil
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
