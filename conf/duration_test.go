package conf

import (
	"errors"
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
	for _, in := range []string{"", "-5s", "5x", "d", "1d-2h", "1h30", "1:2:3:4", "1:60", "1::2", "1.2.3d", "1.5",
		"99999999999999999999", "200000000d", "+5s", "5 s", "a:b"} {
		t.Run(in, func(t *testing.T) {
			got, err := ParseDuration(in)
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want an error", in, got)
			}
			if !errors.Is(err, ErrDuration) {
				t.Errorf("error %v does not wrap ErrDuration", err)
			}
		})
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"5s", "1d12h", "01:00:00", "3600", "-1h", "1.5d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if !errors.Is(err, ErrDuration) {
				t.Fatalf("error %v does not wrap ErrDuration", err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v < 0", s, d)
		}
	})
}
