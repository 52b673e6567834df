package acct

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParseAllocs: the allocations column never crashes the reader, and
// what formatAllocs writes reads back the same.
func FuzzParseAllocs(f *testing.F) {
	for _, s := range []string{"", "gpu01:0,1 gpu02:3", "cpu01:", "a:1,,2", ":", "x:-1", "n:99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		as, err := parseAllocs(s)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		r := Record{ID: "1.x", End: fromMS(1), Outcome: Completed, Allocs: as}
		if r.Validate() != nil {
			return // readable but not something Record would have written
		}
		back, err := parseAllocs(formatAllocs(as))
		if err != nil || !reflect.DeepEqual(back, as) {
			t.Fatalf("%q: %+v -> %q -> %+v, %v", s, as, formatAllocs(as), back, err)
		}
	})
}

// FuzzDecodeDetail: the detail columns never crash the reader (a corrupt
// one is ErrCorrupt), and what encode writes reads back the same.
func FuzzDecodeDetail(f *testing.F) {
	d := Detail{Script: "echo\n", Command: []string{"a"}, Env: map[string]string{"K": "v"},
		Deps: []Dep{{"afterok", "1.x"}}, Events: []Event{{fromMS(5), "Q", "submitted"}}, Grace: 3000000}
	a, b, c, e, g := d.encode()
	f.Add(a, b, c, e, g)
	f.Add("", "", "", "", "")
	f.Add("", "{", "[", "[{\"t\":1e99}]", "{\"grace_ms\":\"x\"}")
	f.Add("", "null", "null", "null", "null")
	f.Fuzz(func(t *testing.T, script, env, deps, events, spec string) {
		d, err := decodeDetail(script, env, deps, events, spec)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		r := Record{ID: "1.x", End: fromMS(1), Outcome: Completed, Detail: d}
		if r.Validate() != nil {
			return
		}
		back, err := decodeDetail(d.encode())
		if err != nil || !reflect.DeepEqual(back, d) {
			t.Fatalf("%+v -> %+v, %v", d, back, err)
		}
	})
}
