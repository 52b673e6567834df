package conf

import (
	"errors"
	"math"
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
	for _, in := range []string{"", "gb", "-1", "-1gb", "1.5gb", "1 parsec", "1eb", "8192pb", "99999999999999999999", "1gbb", "0x10"} {
		t.Run(in, func(t *testing.T) {
			got, err := ParseSize(in)
			if err == nil {
				t.Fatalf("ParseSize(%q) = %d, want an error", in, got)
			}
			if !errors.Is(err, ErrSize) {
				t.Errorf("error %v does not wrap ErrSize", err)
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
	for _, s := range []string{"64gb", "1TiB", "1024", "x", "8192pb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !errors.Is(err, ErrSize) {
				t.Fatalf("error %v does not wrap ErrSize", err)
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
