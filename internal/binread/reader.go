package binread

import (
	"encoding/binary"
	"fmt"
)

// Reader takes fields off the front of a byte slice.
type Reader struct {
	b     []byte
	order binary.ByteOrder
	err   error
}

// New reads b, whose integers are in order.
func New(b []byte, order binary.ByteOrder) Reader { return Reader{b: b, order: order} }

// Bytes takes the next n bytes: a slice of the message (its capacity ends
// with it), nil after a failure. n beyond what is left (or negative) is
// the failure.
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("a field of %d bytes where %d are left", n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// U8 takes a byte.
func (r *Reader) U8() uint8 {
	if v := r.Bytes(1); v != nil {
		return v[0]
	}
	return 0
}

// U16 takes a 16-bit integer.
func (r *Reader) U16() uint16 {
	if v := r.Bytes(2); v != nil {
		return r.order.Uint16(v)
	}
	return 0
}

// U32 takes a 32-bit integer.
func (r *Reader) U32() uint32 {
	if v := r.Bytes(4); v != nil {
		return r.order.Uint32(v)
	}
	return 0
}

// U64 takes a 64-bit integer.
func (r *Reader) U64() uint64 {
	if v := r.Bytes(8); v != nil {
		return r.order.Uint64(v)
	}
	return 0
}

// Len is how many bytes are left.
func (r *Reader) Len() int { return len(r.b) }

// Fail records err, a field's value the decoder refuses, unless a failure
// came first; the reads after it return zero values.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Err is the first failure, nil if none.
func (r *Reader) Err() error { return r.err }

// Done is the first failure, or one for bytes left after the last field.
func (r *Reader) Done() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%d bytes after the last field", len(r.b))
	}
	return r.err
}
