package spool

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestValueRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
	}{
		{"active", Record{ID: "1.lab", Data: []byte(`{"a":1}`)}},
		{"active empty", Record{ID: "1.lab"}},
		{"finished", Record{ID: "1.lab", Data: []byte("x"), Finished: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}},
		{"finished before epoch", Record{ID: "1.lab", Finished: time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC)}},
		{"finished at epoch", Record{ID: "1.lab", Finished: time.Unix(0, 0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeValue(tc.rec.ID, encodeValue(tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tc.rec.ID || !bytes.Equal(got.Data, tc.rec.Data) || !got.Finished.Equal(tc.rec.Finished) || got.Finished.IsZero() != tc.rec.Finished.IsZero() {
				t.Fatalf("round trip = %+v, want %+v", got, tc.rec)
			}
		})
	}
}

func TestValueCorrupt(t *testing.T) {
	good := encodeValue(Record{ID: "1.lab", Data: []byte("x"), Finished: time.Unix(100, 5)})
	mod := func(f func(v []byte)) []byte { v := bytes.Clone(good); f(v); return v }
	tests := []struct {
		name string
		v    []byte
	}{
		{"empty", nil},
		{"short header", good[:valueHeader-1]},
		{"unknown format", mod(func(v []byte) { v[0] = 2 })},
		{"unknown flag", mod(func(v []byte) { v[1] = 3 })},
		{"active with time", mod(func(v []byte) { v[1] = 0 })},
		{"nanoseconds out of range", mod(func(v []byte) { v[10], v[11], v[12], v[13] = 0xff, 0xff, 0xff, 0xff })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeValue("1.lab", tc.v); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decodeValue = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestFinishedKeyOrder(t *testing.T) {
	k, _ := SortKey("5.lab")
	times := []time.Time{
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(-1, 999999999),
		time.Unix(0, 0),
		time.Unix(0, 1),
		time.Unix(1, 0),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i, tm := range times {
		fk := finishedKey(tm, k)
		back, key, err := splitFinishedKey(fk)
		if err != nil || !back.Equal(tm) || !bytes.Equal(key, k) {
			t.Fatalf("splitFinishedKey(finishedKey(%v)) = %v, %x, %v", tm, back, key, err)
		}
		if i > 0 && bytes.Compare(finishedKey(times[i-1], k), fk) >= 0 {
			t.Errorf("finishedKey(%v) >= finishedKey(%v)", times[i-1], tm)
		}
	}
}

// FuzzDecodeValue: decoding arbitrary bytes never panics, and what decodes
// re-encodes to the same bytes.
func FuzzDecodeValue(f *testing.F) {
	f.Add(encodeValue(Record{ID: "1", Data: []byte("{}")}))
	f.Add(encodeValue(Record{ID: "1", Data: []byte("{}"), Finished: time.Unix(1e9, 7)}))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, v []byte) {
		r, err := decodeValue("1", v)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if again := encodeValue(r); !bytes.Equal(again, v) {
			t.Fatalf("encode(decode(%x)) = %x", v, again)
		}
	})
}
