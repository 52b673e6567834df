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
