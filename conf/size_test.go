package conf

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1024", 1024},
		{"1024b", 1024},
		{"1kb", 1 << 10},
		{"64gb", 64 << 30},
		{"64GB", 64 << 30},
		{"64G", 64 << 30},
		{"64g", 64 << 30},
		{"512MiB", 512 << 20},
		{"512mb", 512 << 20},
		{"1TiB", 1 << 40},
		{"2tb", 2 << 40},
		{"1pb", 1 << 50},
		{"3k", 3 << 10},
		{" 8 gb ", 8 << 30},
		{" 8gb ", 8 << 30},
		{"100b", 100},
		{"64kb", 64 << 10},
		{"1tb", 1 << 40},
		{"64GiB", 64 << 30},
		{"16g", 16 << 30},
		{"0064gb", 64 << 30},
		{"8388607tb", 8388607 << 40},
		{"8191pb", 8191 << 50},
		{"9223372036854775807", math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseSizeErrors(t *testing.T) {
	tests := []struct{ in, why string }{
		{"", "want a whole number"},
		{"gb", "want a whole number"},
		{"lots", "want a whole number"},
		{"-1", "want a whole number"},
		{"-1gb", "want a whole number"},
		{"+1gb", "want a whole number"},
		{"1.5gb", `unknown unit ".5gb"`},
		{"1 parsec", `unknown unit "parsec"`},
		{"1eb", `unknown unit "eb"`},
		{"1gbb", `unknown unit "gbb"`},
		{"0x10", `unknown unit "x10"`},
		{"8192pb", "too large"},
		{"8388608tb", "too large"},
		{"99999999999999999999", "too large"},
		{"9223372036854775808", "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if err == nil {
				t.Fatalf("ParseSize(%q) = %d, want an error", tt.in, got)
			}
			if !errors.Is(err, ErrSize) {
				t.Errorf("error %v does not wrap ErrSize", err)
			}
			if msg := err.Error(); !strings.Contains(msg, strconv.Quote(tt.in)) || !strings.Contains(msg, tt.why) {
				t.Errorf("error %q does not name %q and say %q", msg, tt.in, tt.why)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0b"},
		{1000, "1000b"},
		{1024, "1kb"},
		{1536 << 20, "1536mb"},
		{1025, "1025b"},
		{3 << 10, "3kb"},
		{2 << 40, "2tb"},
		{64 << 30, "64gb"},
		{1 << 40, "1tb"},
		{3 << 50, "3pb"},
		{math.MaxInt64, "9223372036854775807b"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := FormatSize(tt.in)
			if got != tt.want {
				t.Errorf("FormatSize(%d) = %q, want %q", tt.in, got, tt.want)
			}
			if back, err := ParseSize(got); err != nil || back != tt.in {
				t.Errorf("ParseSize(%q) = %d, %v; want %d", got, back, err, tt.in)
			}
		})
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64gb", "1TiB", "1024", "x", "8192pb", "1", "0kb", "8388607tb", "1.5gb", "GB", " 8 gb "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !errors.Is(err, ErrSize) || !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %v does not wrap ErrSize or does not name %q", err, s)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d < 0", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("FormatSize round trip of %d: %d, %v", n, back, err)
		}
	})
}
