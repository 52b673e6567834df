package conf

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"0s", 0},
		{"120s", 2 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"500ms", 500 * time.Millisecond},
		{"1.5h", 90 * time.Minute},
		{"7d", 7 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"2h1d", 26 * time.Hour},
		{"0.5d", 12 * time.Hour},
		{"3600", time.Hour},
		{"01:30:00", 90 * time.Minute},
		{"72:00:00", 72 * time.Hour},
		{"10:05", 10*time.Minute + 5*time.Second},
		{"90:00", 90 * time.Minute},
		{" 5s ", 5 * time.Second},
		// PBS walltimes as qsub users write them
		{"30:00", 30 * time.Minute},
		{"12:00:00", 12 * time.Hour},
		{"100:00:00", 100 * time.Hour},
		{"1:00:00:00", 24 * time.Hour},
		{"1:02:03:04", 26*time.Hour + 3*time.Minute + 4*time.Second},
		{"40:23:59:59", 40*24*time.Hour + 23*time.Hour + 59*time.Minute + 59*time.Second},
		{"0000000000001:00:00", time.Hour},
		{"90m", 90 * time.Minute},
		{"12h", 12 * time.Hour},
		{".5h", 30 * time.Minute},
		{"1.d", 24 * time.Hour},
		{"0.1d", 144 * time.Minute},
		{"1d1d", 48 * time.Hour},
		{"5µs", 5 * time.Microsecond},
		{"2562047h47m16.854775807s", math.MaxInt64},
		{"9223372036", 9223372036 * time.Second},
		{"2562047:47:16", 9223372036 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseDurationErrors(t *testing.T) {
	tests := []struct{ in, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{"-5s", "negative"},
		{"-5", "negative"},
		{"-5m", "negative"},
		{"-0s", "negative"},
		{"+5s", "want a number"},
		{"+3600", "want a number"},
		{"5x", `unknown unit "x"`},
		{"d", "want a number"},
		{".d", "bad number"},
		{"1d-2h", `unknown unit "d-"`},
		{"1h30", "want a number followed by a unit"},
		{"1.5", "want a number"},
		{"1.2.3d", "bad number"},
		{"5 s", "unknown unit"},
		{"abc", "want a number"},
		{"99999999999999999999", "too large"},
		{"99999999999999999", "too large"},
		{"9223372037", "too large"},
		{"200000000d", "too large"},
		{"106751d23h47m17s", "too large"},
		{"1:60", `field "60" out of range: seconds must be below 60`},
		{"12:60:00", `field "60" out of range: minutes must be below 60`},
		{"99:99", `field "99" out of range`},
		{"1:24:00:00", `field "24" out of range: hours must be below 24 when days are given`},
		{"1:2:3:4:5", "too many fields"},
		{"1::2", "want [[DD:]HH:]MM:SS"},
		{":30", "want [[DD:]HH:]MM:SS"},
		{"12:00:", "want [[DD:]HH:]MM:SS"},
		{"a:b", "want [[DD:]HH:]MM:SS"},
		{"+1:00", "want [[DD:]HH:]MM:SS"},
		{"1: 30", "want [[DD:]HH:]MM:SS"},
		{"1h:30", "want [[DD:]HH:]MM:SS"},
		{"2562047:47:17", "too large"},
		{"99999999999999999999:00", "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want an error", tt.in, got)
			}
			if !errors.Is(err, ErrDuration) {
				t.Errorf("error %v does not wrap ErrDuration", err)
			}
			if msg := err.Error(); !strings.Contains(msg, strconv.Quote(tt.in)) || !strings.Contains(msg, tt.why) {
				t.Errorf("error %q does not name %q and say %q", msg, tt.in, tt.why)
			}
		})
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"5s", "1d12h", "01:00:00", "3600", "-1h", "1.5d", "12:00:00", "30:00",
		"1:02:03:04", "90m", "1.5h", "-1s", "::", "+5m", "1:24:00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if !errors.Is(err, ErrDuration) || !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %v does not wrap ErrDuration or does not name %q", err, s)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v < 0", s, d)
		}
		// Go's own form of d reads back exactly, PBS's to the second.
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("%q: %v, round trip through %q gave %v, %v", s, d, d.String(), back, err)
		}
		sec := int64(d / time.Second)
		hms := fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
		if back, err := ParseDuration(hms); err != nil || back != d.Truncate(time.Second) {
			t.Fatalf("%q: %v, round trip through %q gave %v, %v", s, d, hms, back, err)
		}
	})
}
