package jobid

import (
	"testing"
)

// FuzzParse: a parsed id prints back to the same text; no input panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "12.lab", "12[]", "12[7].lab", "9223372036854775807", "12[9223372036854775807]", "12[", "0.x.y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			return
		}
		if id.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, id.String())
		}
		if id.Kind == Sub {
			if arr, i, ok := SplitSub(s); ok && (SubOf(arr, i) != s || uint64(i) != id.Index) {
				t.Fatalf("SplitSub(%q) = %q %d", s, arr, i)
			}
		}
	})
}

// FuzzParseRef: a typed id never selects more than the array has, and a
// selection walks no more indices than the array's size.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"12", "12[]", "12[3]", "1[0-9223372036854775806]", "1[0-20000000]", "1[1,4,7-9:2].t", "1[0-16777216:1]"} {
		f.Add(s, "0-99:3")
	}
	f.Fuzz(func(t *testing.T, s, arr string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		a, err := ParseIndices(arr)
		if err != nil {
			return
		}
		n := 0
		r.Each(a, func(i int) {
			n++
			if !a.Contains(i) {
				t.Fatalf("Each gave %d, not in %v", i, a)
			}
		})
		if n > len(r.Sel)*a.Len() {
			t.Fatalf("Each gave %d indices for %d parts of an array of %d", n, len(r.Sel), a.Len())
		}
		if ids, err := r.Expand(1000); err == nil && len(ids) > 1000 {
			t.Fatalf("Expand gave %d ids", len(ids))
		}
	})
}

// FuzzParseRange: Len agrees with Indices, without overflow.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"7", "0-99:2", "0-9223372036854775807", "0-16777216:1", "3-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			return
		}
		if r.Len() < 1 || r.Len() > MaxIndex+1 {
			t.Fatalf("%q: Len %d", s, r.Len())
		}
		if r.Len() <= MaxArraySize && len(r.Indices()) != r.Len() {
			t.Fatalf("%q: %d indices, Len %d", s, len(r.Indices()), r.Len())
		}
		if _, err := ParseArray(s); err == nil && r.Len() > MaxArraySize {
			t.Fatalf("ParseArray(%q) accepted %d subjobs", s, r.Len())
		}
	})
}

// FuzzParseDepend: what parses formats and parses back the same.
func FuzzParseDepend(f *testing.F) {
	for _, s := range []string{"afterok:1", "afterok:1:2.lab,afterany:3[]", "after:4[7].lab", "before:1", "afterok:1[0-9]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		deps, err := ParseDepend(s)
		if err != nil {
			return
		}
		again, err := ParseDepend(FormatDepend(deps))
		if err != nil || len(again) != len(deps) {
			t.Fatalf("%q: formatted %q parses to %v, %v", s, FormatDepend(deps), again, err)
		}
	})
}
