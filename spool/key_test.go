package spool

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestSortKey(t *testing.T) {
	tests := []struct {
		id     string
		num    uint64
		sub    uint64
		suffix string
	}{
		{"0", 0, subPlain, ""},
		{"1.lab", 1, subPlain, "lab"},
		{"123", 123, subPlain, ""},
		{"123[].lab", 123, subParent, "lab"},
		{"123[0].lab", 123, subOffset, "lab"},
		{"123[7].lab", 123, 7 + subOffset, "lab"},
		{"123[7]", 123, 7 + subOffset, ""},
		{"5.ctl.example.org", 5, subPlain, "ctl.example.org"},
		{"9223372036854775807.lab", 1<<63 - 1, subPlain, "lab"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			k, err := SortKey(tc.id)
			if err != nil {
				t.Fatalf("SortKey: %v", err)
			}
			want := append(append(u64(tc.num), u64(tc.sub)...), tc.suffix...)
			if !bytes.Equal(k, want) {
				t.Fatalf("SortKey = %x, want %x", k, want)
			}
			id, err := idFromKey(k)
			if err != nil || id != tc.id {
				t.Fatalf("idFromKey = %q, %v; want %q", id, err, tc.id)
			}
			if n, err := JobNumber(tc.id); err != nil || n != tc.num {
				t.Fatalf("JobNumber = %d, %v; want %d", n, err, tc.num)
			}
		})
	}
}

func TestSortKeyBadIDs(t *testing.T) {
	tests := []struct{ name, id string }{
		{"empty", ""},
		{"no number", ".lab"},
		{"letters", "abc.lab"},
		{"leading zero", "012.lab"},
		{"negative", "-1.lab"},
		{"too big", "9223372036854775808.lab"},
		{"way too big", "99999999999999999999999.lab"},
		{"unclosed bracket", "12[3.lab"},
		{"index letters", "12[a].lab"},
		{"index leading zero", "12[03].lab"},
		{"index negative", "12[-1].lab"},
		{"index too big", "12[9223372036854775808].lab"},
		{"junk after index", "12[3]x.lab"},
		{"junk after number", "12x"},
		{"empty server", "12."},
		{"bracket in server", "12.la[b]"},
		{"space", " 12.lab"},
		{"too long", "1." + string(bytes.Repeat([]byte("a"), 300))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if k, err := SortKey(tc.id); !errors.Is(err, ErrBadID) {
				t.Fatalf("SortKey(%q) = %x, %v; want ErrBadID", tc.id, k, err)
			}
		})
	}
}

func TestSortKeyOrder(t *testing.T) {
	// In the order Scan must produce.
	ordered := []string{
		"0", "1", "1.lab", "2.lab", "9.lab", "10.lab",
		"10[].lab", "10[0].lab", "10[1].lab", "10[2].lab", "10[9].lab", "10[10].lab", "10[11].lab", "10[100].lab",
		"11.lab", "99.lab", "100[].lab", "100[0].lab", "101.lab", "1000.lab", "10000.lab",
		"9223372036854775807.lab",
	}
	keys := make([][]byte, len(ordered))
	for i, id := range ordered {
		k, err := SortKey(id)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	if !slices.IsSortedFunc(keys, bytes.Compare) {
		for i := 1; i < len(keys); i++ {
			if bytes.Compare(keys[i-1], keys[i]) >= 0 {
				t.Errorf("key(%s) >= key(%s)", ordered[i-1], ordered[i])
			}
		}
	}
	if len(slices.CompactFunc(slices.Clone(keys), bytes.Equal)) != len(keys) {
		t.Fatal("two ids share a key")
	}
}

func TestIDFromKeyRejects(t *testing.T) {
	good, _ := SortKey("12[3].lab")
	tests := []struct {
		name string
		key  []byte
	}{
		{"short", good[:10]},
		{"sub out of range", append(append(u64(1), u64(1<<64-1)...), "lab"...)},
		{"number out of range", append(u64(1<<63), u64(0)...)},
		{"brackets in suffix", append(append(u64(1), u64(0)...), "a]"...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if id, err := idFromKey(tc.key); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("idFromKey(%x) = %q, %v; want ErrCorrupt", tc.key, id, err)
			}
		})
	}
}

// FuzzSortKey: SortKey either fails with ErrBadID or gives a key that maps
// back to the same id.
func FuzzSortKey(f *testing.F) {
	for _, s := range []string{"1.lab", "12[].lab", "12[3].lab", "7", "01", "1[", "1.", "1[2].a.b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		k, err := SortKey(id)
		if err != nil {
			if !errors.Is(err, ErrBadID) {
				t.Fatalf("SortKey(%q) error %v does not wrap ErrBadID", id, err)
			}
			return
		}
		back, err := idFromKey(k)
		if err != nil || back != id {
			t.Fatalf("idFromKey(SortKey(%q)) = %q, %v", id, back, err)
		}
	})
}

// FuzzIDFromKey: decoding arbitrary keys never panics, and what decodes
// re-encodes to the same key.
func FuzzIDFromKey(f *testing.F) {
	for _, id := range []string{"1.lab", "12[].lab", "12[3].lab", "7"} {
		k, _ := SortKey(id)
		f.Add(k)
	}
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, k []byte) {
		id, err := idFromKey(k)
		if err != nil {
			return
		}
		k2, err := SortKey(id)
		if err != nil || !bytes.Equal(k, k2) {
			t.Fatalf("SortKey(idFromKey(%x)=%q) = %x, %v", k, id, k2, err)
		}
	})
}
