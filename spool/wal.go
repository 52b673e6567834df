package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/sharq-hpc/sharq/internal/binread"
)

// The write-ahead log, spool_dir/jobs.wal, holds the writes not yet
// checkpointed into jobs.db. Its format (all integers little endian):
//
//	header (walHeaderSize bytes):
//	  [0:8]   magic "SHARQWAL"
//	  [8:12]  format version (walVersion)
//	  [12:28] salt: 16 random bytes chosen when the file is created
//	  [28:32] CRC-32C of [0:28]
//	frames, one per write, from walHeaderSize on:
//	  [0:4]   body length L (walMinBody..walMaxBody)
//	  [4:12]  LSN: the write's log sequence number (1, 2, ... for ever)
//	  [12:16] header check: CRC-32C of salt, [0:12]
//	  [16:20] body check: CRC-32C of salt, [0:12], body
//	  [20:20+L] body: op kind (1 byte), then the op's fields
//
// The file is reused after a checkpoint (writing restarts after the header),
// so past the last frame lie zeros or frames of an earlier round; those
// carry LSNs at or below the one jobs.db records as applied and end the
// log. The salt keys both checks, so that bytes of a job's data inside an
// old frame cannot pass for a frame; the header check lets the reader
// reject a non-frame cheaply before it checks a body.
const (
	walMagic      = "SHARQWAL"
	walVersion    = 1
	walHeaderSize = 32
	walSaltSize   = 16

	frameHead  = 20
	walMinBody = 1
	// walMaxBody bounds one frame: a write whose frame would be larger
	// (a Put of many large records) goes to jobs.db directly.
	walMaxBody = 4 << 20

	maxStateKey = 32 << 10 // bbolt's MaxKeySize
)

// Op kinds of a frame body.
const (
	opPut    = 1 // u32 n; n × (u16 id length, id, u32 value length, value)
	opDelete = 2 // u32 n; n × (u16 id length, id)
	opState  = 3 // u16 key length, key, u8 1=set 0=delete, u32 value length, value
	opNext   = 4 // u64: NextIDs hands out numbers from here on
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// walRec is one record of a Put frame: its id and stored value (see
// encodeValue).
type walRec struct {
	id  string
	val []byte
}

// walOp is one decoded frame.
type walOp struct {
	lsn  uint64
	kind byte
	recs []walRec // opPut
	ids  []string // opDelete
	key  string   // opState
	val  []byte   // opState; nil deletes
	next uint64   // opNext
}

var (
	errFrameShort = errors.New("frame runs past the end of the log")
	errFrameBad   = errors.New("frame checksum or length mismatch")
)

// encodeHeader returns the WAL file header for salt.
func encodeHeader(salt []byte) []byte {
	h := make([]byte, walHeaderSize)
	copy(h, walMagic)
	binary.LittleEndian.PutUint32(h[8:12], walVersion)
	copy(h[12:28], salt)
	binary.LittleEndian.PutUint32(h[28:32], crc32.Checksum(h[:28], castagnoli))
	return h
}

// decodeHeader checks a WAL header and returns its salt.
func decodeHeader(h []byte) ([]byte, error) {
	if len(h) < walHeaderSize {
		return nil, fmt.Errorf("header of %d bytes is short: %w", len(h), ErrCorrupt)
	}
	if string(h[:8]) != walMagic {
		return nil, fmt.Errorf("not a sharq write-ahead log (magic %q): %w", h[:8], ErrSchema)
	}
	if crc32.Checksum(h[:28], castagnoli) != binary.LittleEndian.Uint32(h[28:32]) {
		return nil, fmt.Errorf("header checksum mismatch: %w", ErrCorrupt)
	}
	if v := binary.LittleEndian.Uint32(h[8:12]); v != walVersion {
		return nil, fmt.Errorf("log format %d is not the one this sharq knows (%d): %w", v, walVersion, ErrSchema)
	}
	return h[12:28], nil
}

// encodeFrame returns the frame of body with lsn under salt.
func encodeFrame(salt []byte, lsn uint64, body []byte) []byte {
	f := make([]byte, frameHead+len(body))
	binary.LittleEndian.PutUint32(f[0:4], uint32(len(body)))
	binary.LittleEndian.PutUint64(f[4:12], lsn)
	copy(f[frameHead:], body)
	sealFrame(salt, f)
	return f
}

// sealFrame fills in the two checks of a frame whose length, LSN and body
// are in place.
func sealFrame(salt, f []byte) {
	hc := crc32.Update(crc32.Checksum(salt, castagnoli), castagnoli, f[0:12])
	binary.LittleEndian.PutUint32(f[12:16], hc)
	bc := crc32.Update(hc, castagnoli, f[frameHead:])
	binary.LittleEndian.PutUint32(f[16:20], bc)
}

// frameAt checks the frame at the start of buf and returns its LSN, body
// and total length. A frame whose header is sound but that runs past buf
// gives errFrameShort; anything else that is not a frame, errFrameBad.
func frameAt(salt, buf []byte) (lsn uint64, body []byte, n int, err error) {
	if len(buf) < frameHead {
		return 0, nil, 0, errFrameShort
	}
	l := binary.LittleEndian.Uint32(buf[0:4])
	if l < walMinBody || l > walMaxBody {
		return 0, nil, 0, errFrameBad
	}
	saltSum := crc32.Checksum(salt, castagnoli)
	hc := crc32.Update(saltSum, castagnoli, buf[0:12])
	if hc != binary.LittleEndian.Uint32(buf[12:16]) {
		return 0, nil, 0, errFrameBad
	}
	lsn = binary.LittleEndian.Uint64(buf[4:12])
	end := frameHead + int(l)
	if len(buf) < end {
		return lsn, nil, 0, errFrameShort
	}
	if crc32.Update(hc, castagnoli, buf[frameHead:end]) != binary.LittleEndian.Uint32(buf[16:20]) {
		return lsn, nil, 0, errFrameBad
	}
	return lsn, buf[frameHead:end], end, nil
}

// appendU32 and friends build frame bodies.
func appendU16(b []byte, v int) []byte { return binary.LittleEndian.AppendUint16(b, uint16(v)) }
func appendU32(b []byte, v int) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }

// putBody is the body of a Put of recs; size is its length, known in
// advance so that a write too large for one frame is seen before it is
// built.
func putBodySize(recs []walRec) int {
	n := 1 + 4
	for _, r := range recs {
		n += 2 + len(r.id) + 4 + len(r.val)
	}
	return n
}

func putBody(recs []walRec) []byte {
	b := make([]byte, 0, putBodySize(recs))
	b = append(b, opPut)
	b = appendU32(b, len(recs))
	for _, r := range recs {
		b = appendU16(b, len(r.id))
		b = append(b, r.id...)
		b = appendU32(b, len(r.val))
		b = append(b, r.val...)
	}
	return b
}

func deleteBodySize(ids []string) int {
	n := 1 + 4
	for _, id := range ids {
		n += 2 + len(id)
	}
	return n
}

func deleteBody(ids []string) []byte {
	b := make([]byte, 0, deleteBodySize(ids))
	b = append(b, opDelete)
	b = appendU32(b, len(ids))
	for _, id := range ids {
		b = appendU16(b, len(id))
		b = append(b, id...)
	}
	return b
}

func stateBody(key string, val []byte) []byte {
	b := make([]byte, 0, 1+2+len(key)+1+4+len(val))
	b = append(b, opState)
	b = appendU16(b, len(key))
	b = append(b, key...)
	if val == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
	}
	b = appendU32(b, len(val))
	return append(b, val...)
}

func nextBody(next uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte{opNext}, next)
}

// bodyReader decodes a body (little-endian) with bounds checks; the first
// failure sticks.
type bodyReader struct{ binread.Reader }

// count reads an item count and checks that n items of at least min bytes
// each fit in what is left.
func (r *bodyReader) count(min int) int {
	n := int(r.U32())
	if r.Err() == nil && (n < 0 || n > r.Len()/min) { // n < 0: a 32-bit int
		r.Fail(fmt.Errorf("count %d cannot fit in %d bytes", n, r.Len()))
		return 0
	}
	return n
}

// id reads a length-prefixed job id and checks that it is one.
func (r *bodyReader) id() string {
	l := int(r.U16())
	if l > maxIDLen {
		r.Fail(fmt.Errorf("job id of %d bytes", l))
		return ""
	}
	id := string(r.Bytes(l))
	if r.Err() == nil {
		if _, err := SortKey(id); err != nil {
			r.Fail(err)
		}
	}
	return id
}

// decodeBody decodes a frame body. It checks every length and id, and that
// Put values decode; it does not copy: the op refers to body.
func decodeBody(lsn uint64, body []byte) (walOp, error) {
	r := &bodyReader{binread.New(body, binary.LittleEndian)}
	op := walOp{lsn: lsn, kind: r.U8()}
	switch op.kind {
	case opPut:
		n := r.count(2 + 4)
		op.recs = make([]walRec, 0, n)
		for range n {
			id := r.id()
			l := int(r.U32())
			if l > MaxRecordSize+valueHeader {
				r.Fail(fmt.Errorf("job %s: value of %d bytes", id, l))
			}
			val := r.Bytes(l)
			if r.Err() == nil {
				if _, err := decodeFinished(val); err != nil {
					r.Fail(fmt.Errorf("job %s: %w", id, err))
				}
			}
			op.recs = append(op.recs, walRec{id: id, val: val})
		}
	case opDelete:
		n := r.count(2)
		op.ids = make([]string, 0, n)
		for range n {
			op.ids = append(op.ids, r.id())
		}
	case opState:
		l := int(r.U16())
		if r.Err() == nil && (l == 0 || l > maxStateKey) {
			r.Fail(fmt.Errorf("state key of %d bytes", l))
		}
		op.key = string(r.Bytes(l))
		set := r.U8()
		vl := int(r.U32())
		if vl > MaxRecordSize {
			r.Fail(fmt.Errorf("state %s: value of %d bytes", op.key, vl))
		}
		val := r.Bytes(vl)
		switch {
		case r.Err() != nil:
		case set == 1:
			op.val = val
			if op.val == nil {
				op.val = []byte{}
			}
		case set != 0 || vl != 0:
			r.Fail(fmt.Errorf("state %s: bad delete marker %d with %d value bytes", op.key, set, vl))
		}
	case opNext:
		op.next = r.U64()
	default:
		r.Fail(fmt.Errorf("unknown op kind %d", op.kind))
	}
	if err := r.Done(); err != nil {
		return walOp{}, fmt.Errorf("log entry %d: %w: %w", lsn, ErrCorrupt, err)
	}
	return op, nil
}

// encodeBody is the inverse of decodeBody.
func encodeBody(op walOp) []byte {
	switch op.kind {
	case opPut:
		return putBody(op.recs)
	case opDelete:
		return deleteBody(op.ids)
	case opState:
		return stateBody(op.key, op.val)
	case opNext:
		return nextBody(op.next)
	}
	panic(fmt.Sprintf("spool: encodeBody of op kind %d", op.kind))
}
