package binread

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// TestReader reads messages field by field in both byte orders: the values,
// the first failure and what it says, zero values after it, and Done's
// check of bytes left over.
func TestReader(t *testing.T) {
	msg := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	refused := errors.New("refused")
	type read func(r *Reader) any
	u8 := func(r *Reader) any { return r.U8() }
	u16 := func(r *Reader) any { return r.U16() }
	u32 := func(r *Reader) any { return r.U32() }
	u64 := func(r *Reader) any { return r.U64() }
	bytes := func(n int) read { return func(r *Reader) any { return r.Bytes(n) } }
	fail := func(r *Reader) any { r.Fail(refused); return nil }
	for _, c := range []struct {
		name  string
		order binary.ByteOrder
		msg   []byte
		reads []read
		want  []any
		err   string // of Done
	}{
		{"big-endian, every width", binary.BigEndian, msg, []read{u8, u16, u32, u64, u8},
			[]any{uint8(1), uint16(0x0203), uint32(0x04050607), uint64(0x08090a0b0c0d0e0f), uint8(16)}, ""},
		{"little-endian, every width", binary.LittleEndian, msg, []read{u8, u16, u32, u64, u8},
			[]any{uint8(1), uint16(0x0302), uint32(0x07060504), uint64(0x0f0e0d0c0b0a0908), uint8(16)}, ""},
		{"bytes, then none", binary.BigEndian, msg[:3], []read{bytes(3), bytes(0)}, []any{[]byte{1, 2, 3}, []byte{}}, ""},
		{"short: zero values after", binary.BigEndian, msg[:3], []read{u16, u32, u8, bytes(0)},
			[]any{uint16(0x0102), uint32(0), uint8(0), []byte(nil)}, "a field of 4 bytes where 1 are left"},
		{"a negative length", binary.LittleEndian, msg[:3], []read{bytes(-1), u8}, []any{[]byte(nil), uint8(0)}, "a field of -1 bytes where 3 are left"},
		{"bytes left over", binary.BigEndian, msg[:3], []read{u8}, []any{uint8(1)}, "2 bytes after the last field"},
		{"empty", binary.BigEndian, nil, []read{u8}, []any{uint8(0)}, "a field of 1 bytes where 0 are left"},
		{"the decoder's failure sticks", binary.BigEndian, msg[:3], []read{u8, fail, u8, bytes(1)},
			[]any{uint8(1), nil, uint8(0), []byte(nil)}, "refused"},
		{"the first failure stays", binary.BigEndian, msg[:1], []read{u16, fail}, []any{uint16(0), nil}, "a field of 2 bytes where 1 are left"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := New(c.msg, c.order)
			for i, rd := range c.reads {
				got := rd(&r)
				if b, ok := got.([]byte); ok {
					if w := c.want[i].([]byte); !slices.Equal(b, w) || (b == nil) != (w == nil) {
						t.Errorf("read %d: %v, want %v", i, b, w)
					}
					if cap(b) != len(b) {
						t.Errorf("read %d: capacity %d past the field's %d bytes", i, cap(b), len(b))
					}
					continue
				}
				if got != c.want[i] {
					t.Errorf("read %d: %#v, want %#v", i, got, c.want[i])
				}
			}
			err := r.Done()
			if (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
				t.Fatalf("Done: %v, want %q", err, c.err)
			}
			if c.err == "refused" && !errors.Is(err, refused) {
				t.Errorf("Done: %v is not the decoder's error", err)
			}
			if r.Err() != err {
				t.Errorf("Err %v after Done %v", r.Err(), err)
			}
		})
	}
}
