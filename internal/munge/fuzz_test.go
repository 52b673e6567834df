package munge

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// FuzzDecodeReply hands arbitrary bytes to the reply reader and both body
// parsers, as if munged's socket had sent them: no panic, no body longer
// than maxReply read, every error one of the wire's, and whatever parses
// comes out the same after a round trip through munged's encoding.
func FuzzDecodeReply(f *testing.F) {
	f.Add(message(msgDecRsp, appendDecodeReply(nil, decodeReply{status: status{code: codeExpired, msg: "Expired"},
		ttl: 300, encoded: 1700000000, uid: 1000, gid: 1000, payload: []byte("sharq-request-v1 sha256:00"), address: []byte{127, 0, 0, 1}, realm: []byte("r\x00")})))
	f.Add(message(msgDecRsp, appendDecodeReply(nil, decodeReply{})))
	f.Add(message(msgEncRsp, appendEncodeReply(nil, encodeReply{cred: "MUNGE:AwQFAAA=:"})))
	f.Add(message(msgEncRsp, appendEncodeReply(nil, encodeReply{status: status{code: codeSocket, msg: "no"}})))
	f.Add(header{typ: msgDecRsp, length: 0xFFFFFFFF}.append(nil))
	f.Add([]byte("MUNGE"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range []uint8{msgEncRsp, msgDecRsp} {
			body, err := readReply(bytes.NewReader(data), typ)
			if err != nil {
				if !errors.Is(err, errWire) && !errors.Is(err, errTooLong) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("readReply: %v", err)
				}
				continue
			}
			if len(body) > maxReply {
				t.Fatalf("a body of %d bytes", len(body))
			}
			if typ == msgDecRsp {
				rep, err := parseDecodeReply(body)
				if err != nil {
					if !errors.Is(err, errWire) {
						t.Fatalf("parseDecodeReply: %v", err)
					}
					continue
				}
				again, err := parseDecodeReply(appendDecodeReply(nil, rep))
				if err != nil || !reflect.DeepEqual(again, rep) {
					t.Fatalf("round trip: %+v, %v; want %+v", again, err, rep)
				}
				continue
			}
			rep, err := parseEncodeReply(body)
			if err != nil {
				if !errors.Is(err, errWire) {
					t.Fatalf("parseEncodeReply: %v", err)
				}
				continue
			}
			if rep.code == codeSuccess && checkFormat(rep.cred) != nil {
				t.Fatalf("accepted credential %q", rep.cred)
			}
		}
	})
}
