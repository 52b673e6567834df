package spool

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// FuzzWALFrame feeds arbitrary bytes to the log's decoders: the frame
// reader, the body decoder and the whole-log reader never panic, fail only
// with ErrCorrupt, and what decodes re-encodes to the same bytes.
func FuzzWALFrame(f *testing.F) {
	salt := bytes.Repeat([]byte{0x5a}, walSaltSize)
	fin := time.Unix(1e9, 7)
	for i, op := range []walOp{
		{kind: opPut, recs: []walRec{{id: "1.lab", val: encodeValue(Record{ID: "1.lab", Data: []byte("x")})}, {id: "2[3].lab", val: encodeValue(Record{ID: "2[3].lab", Finished: fin})}}},
		{kind: opDelete, ids: []string{"1.lab", "2[].lab"}},
		{kind: opState, key: "drained", val: []byte(`["n1"]`)},
		{kind: opState, key: "usage"},
		{kind: opState, key: "usage", val: []byte{}},
		{kind: opNext, next: 1025},
	} {
		body := encodeBody(op)
		frame := encodeFrame(salt, uint64(i+1), body)
		f.Add(frame)
		f.Add(body)
		f.Add(append(frame, encodeFrame(salt, uint64(i+2), body)...))
	}
	f.Add([]byte{})
	f.Add(make([]byte, frameHead))
	quiet := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, data []byte) {
		if lsn, body, n, err := frameAt(salt, data); err == nil {
			if n > len(data) || n != frameHead+len(body) {
				t.Fatalf("frame of %d bytes in %d", n, len(data))
			}
			op, err := decodeBody(lsn, body)
			switch {
			case err == nil:
				if got := encodeFrame(salt, lsn, encodeBody(op)); !bytes.Equal(got, data[:n]) {
					t.Fatalf("frame re-encodes to %x, want %x", got, data[:n])
				}
			case !errors.Is(err, ErrCorrupt):
				t.Fatalf("decodeBody: %v, want ErrCorrupt", err)
			}
		}
		// The body decoder alone (a fuzzed frame's checksum rarely passes).
		if op, err := decodeBody(1, data); err == nil {
			if got := encodeBody(op); !bytes.Equal(got, data) {
				t.Fatalf("body re-encodes to %x, want %x", got, data)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("decodeBody: %v, want ErrCorrupt", err)
		}
		// A whole log of these bytes.
		log := append(encodeHeader(salt), data...)
		ops, err := readLog("fuzz.wal", log, salt, 0, quiet)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("readLog: %v, want ErrCorrupt", err)
		}
		for i, op := range ops {
			if op.lsn != uint64(i+1) {
				t.Fatalf("entry %d has LSN %d", i, op.lsn)
			}
		}
	})
}
