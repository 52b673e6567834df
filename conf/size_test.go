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
		{"1.5gb", 3 << 29},
		{"2.0gb", 2 << 30},
		{"2.000000000000000000gb", 2 << 30},
		{"0.5", 1},
		{"0.1kb", 103},
		{"1.25MiB", 5 << 18},
		{" 1.5 tb ", 3 << 39},
		{"0.000000000000000001pb", 1},
		{"8191.5pb", 8191<<50 + 1<<49},
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
		{"", "want a number"},
		{"gb", "want a number"},
		{"lots", "want a number"},
		{"-1", "want a number"},
		{"-1gb", "want a number"},
		{"+1gb", "want a number"},
		{".5gb", "want a number"},
		{"2.gb", `unknown unit ".gb"`},
		{"1.5.5gb", `unknown unit ".5gb"`},
		{"1,5gb", `unknown unit ",5gb"`},
		{"1.0000000000000000001gb", "at most 18 decimals"},
		{"1e3gb", `unknown unit "e3gb"`},
		{"8191.999999999999999999pb", "too large"},
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

// FuzzParseSizeFraction: a size with a decimal fraction parses to no less
// than its whole part and at most a unit more (FuzzParseSize checks the
// rest).
func FuzzParseSizeFraction(f *testing.F) {
	for _, s := range []string{"64gb", "1.5gb", "2.0gb", "0.000000000000000001pb", "8191.5pb", "1.", ".5", "9223372036854775807", "1.9999999999999999999kb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !errors.Is(err, ErrSize) {
				t.Fatalf("ParseSize(%q): %v does not wrap ErrSize", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
		}
		if whole, frac, ok := strings.Cut(strings.TrimSpace(s), "."); ok && frac != "" {
			i := strings.IndexFunc(frac, func(r rune) bool { return r < '0' || r > '9' })
			unit := "b"
			if i >= 0 {
				unit = frac[i:]
			}
			w, err := ParseSize(whole + unit)
			u, _ := ParseSize("1" + unit)
			if err == nil && (n < w || n-w > u) {
				t.Fatalf("ParseSize(%q) = %d, outside [%d, %d]", s, n, w, w+u)
			}
		}
	})
}
