package jobid

import (
	"errors"
	"testing"
)

// TestDepTypeText: a dependency type goes on the wire as its PBS name and
// comes back the same; any other name, or a value outside the types, is
// refused with ErrBadDepend.
func TestDepTypeText(t *testing.T) {
	for _, d := range []DepType{AfterOK, AfterNotOK, AfterAny, After} {
		b, err := d.MarshalText()
		if err != nil || string(b) != d.String() {
			t.Fatalf("%v: MarshalText = %q, %v", d, b, err)
		}
		var back DepType = 99
		if err := back.UnmarshalText(b); err != nil || back != d {
			t.Errorf("%s: UnmarshalText = %v, %v", b, back, err)
		}
	}
	for _, s := range []string{"", "before", "AfterOK", "afterok ", "runone"} {
		var d DepType = After
		if err := d.UnmarshalText([]byte(s)); !errors.Is(err, ErrBadDepend) || d != After {
			t.Errorf("UnmarshalText(%q) = %v, %v; want ErrBadDepend and no change", s, d, err)
		}
	}
	if _, err := DepType(4).MarshalText(); !errors.Is(err, ErrBadDepend) {
		t.Errorf("MarshalText(4) = %v, want ErrBadDepend", err)
	}
}

// TestRangeText: an array's indices go on the wire as qsub -J gives them
// ("start-end", ":step" when not 1) and come back the same; indices no
// parse gives (the zero Range, too many, out of range) are never written,
// and a text ParseIndices refuses never read.
func TestRangeText(t *testing.T) {
	for _, tt := range []struct {
		r    Range
		text string
	}{
		{Range{Lo: 0, Hi: 99, Step: 1}, "0-99"},
		{Range{Lo: 1, Hi: 100, Step: 2}, "1-100:2"},
		{Range{Lo: 7, Hi: 7, Step: 1}, "7-7"},
	} {
		b, err := tt.r.MarshalText()
		if err != nil || string(b) != tt.text || tt.r.Text() != tt.text {
			t.Fatalf("%+v: MarshalText = %q, %v; Text %q", tt.r, b, err, tt.r.Text())
		}
		var back Range
		if err := back.UnmarshalText(b); err != nil || back != tt.r {
			t.Errorf("%s: UnmarshalText = %+v, %v", b, back, err)
		}
	}
	for _, r := range []Range{{}, {Lo: 0, Hi: MaxArraySize, Step: 1}, {Lo: 5, Hi: 4, Step: 1}, {Lo: 0, Hi: MaxIndex + 1, Step: MaxIndex}, {Lo: -1, Hi: 3, Step: 1}} {
		if b, err := r.MarshalText(); !errors.Is(err, ErrBadRange) || r.Text() != "" {
			t.Errorf("%+v: MarshalText = %q, %v; want ErrBadRange", r, b, err)
		}
	}
	if !(Range{}).IsZero() || (Range{Step: 1}).IsZero() {
		t.Error("IsZero")
	}
	for _, s := range []string{"", "0-100000", "0-9223372036854775807", "a-b", "5-4"} {
		r := Range{Lo: 1, Hi: 2, Step: 1}
		if err := r.UnmarshalText([]byte(s)); !errors.Is(err, ErrBadRange) || r != (Range{Lo: 1, Hi: 2, Step: 1}) {
			t.Errorf("UnmarshalText(%q) = %+v, %v; want ErrBadRange and no change", s, r, err)
		}
	}
}
