package conf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", "  ", nil},
		{"single", "gpu01", []string{"gpu01"}},
		{"zero padded range", "gpu[01-04]", []string{"gpu01", "gpu02", "gpu03", "gpu04"}},
		{"padding kept past width", "n[08-10]", []string{"n08", "n09", "n10"}},
		{"no padding", "n[9-11]", []string{"n9", "n10", "n11"}},
		{"wide padding", "n[001-002]", []string{"n001", "n002"}},
		{"range and single", "a[1-3,7],b5", []string{"a1", "a2", "a3", "a7", "b5"}},
		{"several bracketed", "a[1-2],b[01-02],c", []string{"a1", "a2", "b01", "b02", "c"}},
		{"suffix", "gpu[1-2]-ib", []string{"gpu1-ib", "gpu2-ib"}},
		{"product", "r[1-2]n[1-2]", []string{"r1n1", "r1n2", "r2n1", "r2n2"}},
		{"bracket only", "[1-2]", []string{"1", "2"}},
		{"blanks around entries", " a1 , a2 ", []string{"a1", "a2"}},
		{"blanks in brackets", "a[ 1 , 3 ]", []string{"a1", "a3"}},
		{"duplicates kept", "a[1-2],a1", []string{"a1", "a2", "a1"}},
		{"order kept", "b[2,1]", []string{"b2", "b1"}},
		{"device paths", "/dev/nvidia[0-2]", []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2"}},
		{"one-element range", "x[5-5]", []string{"x5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandHostlist(tt.in)
			if err != nil {
				t.Fatalf("ExpandHostlist(%q): %v", tt.in, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExpandHostlist(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"reversed range", "gpu[3-1]", `range "3-1" is reversed`},
		{"unterminated", "gpu[", "missing ']'"},
		{"unterminated range", "gpu[1-3", "missing ']'"},
		{"letters", "gpu[a-b]", `bad number "a"`},
		{"stray close", "gpu]1", "']' without '['"},
		{"nested", "gpu[1[2]]", "nested '['"},
		{"empty brackets", "gpu[]", "empty brackets"},
		{"empty item", "gpu[1,,2]", `bad number ""`},
		{"open range", "gpu[1-]", `bad number ""`},
		{"negative", "gpu[-1]", `bad number ""`},
		{"empty entry", "a,,b", "empty entry"},
		{"trailing comma", "a,", "empty entry"},
		{"blank inside", "gpu 1", "bad character ' '"},
		{"control char", "gpu\x01", `bad character '\x01'`},
		{"too many", "n[0-99999]", "more than 65536 names"},
		{"too many product", "a[0-999]b[0-999]", "more than 65536 names"},
		{"too long number", "n[1234567890123456789]", "bad number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExpandHostlist(tt.in)
			if err == nil {
				t.Fatalf("ExpandHostlist(%q) = %q, want an error", tt.in, got)
			}
			if !errors.Is(err, ErrHostlist) {
				t.Errorf("error %v does not wrap ErrHostlist", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestCompressHostlist(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"none", nil, ""},
		{"single", []string{"b5"}, "b5"},
		{"no number", []string{"login", "head"}, "login,head"},
		{"range", []string{"gpu01", "gpu02", "gpu03", "gpu07"}, "gpu[01-03,07]"},
		{"mixed prefixes", []string{"a1", "a2", "a3", "a7", "b5"}, "a[1-3,7],b5"},
		{"across a power of ten", []string{"n9", "n10", "n11"}, "n[9-11]"},
		{"padding across a power of ten", []string{"n08", "n09", "n10"}, "n[08-10]"},
		{"different widths do not join", []string{"n9", "n010"}, "n[9,010]"},
		{"order kept", []string{"n3", "n1", "n2"}, "n[3,1-2]"},
		{"suffix", []string{"g1-ib", "g2-ib"}, "g[1-2]-ib"},
		{"last number", []string{"r1n1", "r1n2", "r2n1"}, "r1n[1-2],r2n1"},
		{"interleaved", []string{"a1", "b1", "a2"}, "a1,b1,a2"},
		{"duplicates", []string{"a1", "a1"}, "a[1,1]"},
		{"device paths", []string{"/dev/nvidia0", "/dev/nvidia1"}, "/dev/nvidia[0-1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompressHostlist(tt.in)
			if got != tt.want {
				t.Errorf("CompressHostlist(%q) = %q, want %q", tt.in, got, tt.want)
			}
			back, err := ExpandHostlist(got)
			if err != nil || !slices.Equal(back, tt.in) {
				t.Errorf("ExpandHostlist(%q) = %q, %v; want %q", got, back, err, tt.in)
			}
		})
	}
}

// FuzzHostlist checks that what ExpandHostlist accepts survives a
// compress/expand round trip, and that compressing is stable.
func FuzzHostlist(f *testing.F) {
	for _, s := range []string{"gpu[01-16]", "a[1-3,7],b5", "n[9-11],n[08-10]", "r[1-2]n[1-2]-x",
		"gpu[3-1]", "gpu[", "gpu[a-b]", "a,,b", "/dev/nvidia[0-7]", "x[0-0],x0,x00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ExpandHostlist(s)
		if err != nil {
			if !errors.Is(err, ErrHostlist) {
				t.Fatalf("error %v does not wrap ErrHostlist", err)
			}
			return
		}
		if len(names) > MaxHostlistNames {
			t.Fatalf("%d names, over the limit", len(names))
		}
		c := CompressHostlist(names)
		back, err := ExpandHostlist(c)
		if err != nil {
			t.Fatalf("ExpandHostlist(CompressHostlist(%q)) = %q: %v", s, c, err)
		}
		if !slices.Equal(back, names) {
			t.Fatalf("round trip of %q via %q: got %q, want %q", s, c, back, names)
		}
		if c2 := CompressHostlist(back); c2 != c {
			t.Fatalf("compress not stable: %q then %q", c, c2)
		}
	})
}

func BenchmarkExpandHostlist(b *testing.B) {
	for b.Loop() {
		if _, err := ExpandHostlist("gpu[0001-4096],cpu[001-512]"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompressHostlist(b *testing.B) {
	names := make([]string, 4096)
	for i := range names {
		names[i] = fmt.Sprintf("gpu%04d", i+1)
	}
	for b.Loop() {
		CompressHostlist(names)
	}
}
