package munge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sharq-hpc/sharq/internal/binread"
)

// munged's client protocol (MUNGE 0.5.x, src/libcommon/m_msg.c): each
// message is a header of 11 bytes, then a body of the header's length.
// Integers are big-endian; strings carry their NUL in their length.
//
//	header   magic u32 (0x00606D4B), version u8 (4), type u8, retry u8, body length u32
//	ENC_REQ  cipher u8, mac u8, zip u8, realm_len u8, realm, ttl u32, auth_uid u32, auth_gid u32, data_len u32, data
//	ENC_RSP  error_num u8, error_len u8, error, data_len u32, data (the credential)
//	DEC_REQ  data_len u32, data (the credential and its NUL)
//	DEC_RSP  error_num u8, error_len u8, error, cipher u8, mac u8, zip u8, realm_len u8, realm,
//	         ttl u32, addr_len u8, addr, time0 u32 (encoded), time1 u32 (decoded),
//	         cred_uid u32, cred_gid u32, auth_uid u32, auth_gid u32, data_len u32, data (the payload)
//
// munged learns the client's uid and gid from the socket (SO_PEERCRED on
// Linux), so the client sends nothing more.
const (
	msgMagic   = 0x00606D4B
	msgVersion = 4
	headerSize = 11

	msgEncReq = 2
	msgEncRsp = 3
	msgDecReq = 4
	msgDecRsp = 5

	// "the daemon's default" for cipher, mac and zip; ttl 0 is its
	// default too, and uid/gid ^0 lets anyone decode.
	defaultAlgo = 1
	anyID       = ^uint32(0)

	// maxReply bounds the body of a reply read from the socket: munged's
	// answers to this package's requests (credentials up to
	// MaxCredential, payloads up to what such a credential holds) are far
	// smaller. A longer one is refused before anything is allocated.
	maxReply = 64 << 10
)

// errWire is a reply that does not follow the protocol; it is wrapped
// with ErrSocket (libmunge says EMUNGE_SOCKET for these, and retries).
var errWire = errors.New("malformed reply from munged")

// errTooLong is a reply longer than maxReply: not retried (libmunge does
// not retry EMUNGE_BAD_LENGTH either).
var errTooLong = errors.New("reply from munged too long")

// header is a message's header.
type header struct {
	typ, retry uint8
	length     uint32
}

func (h header) append(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, msgMagic)
	b = append(b, msgVersion, h.typ, h.retry)
	return binary.BigEndian.AppendUint32(b, h.length)
}

// parseHeader checks a header read from munged: the magic, the version,
// the type wanted and a length of at most maxReply.
func parseHeader(b [headerSize]byte, want uint8) (header, error) {
	if m := binary.BigEndian.Uint32(b[0:4]); m != msgMagic {
		return header{}, fmt.Errorf("%w: magic %#08x, want %#08x (is this munged's socket?)", errWire, m, msgMagic)
	}
	if b[4] != msgVersion {
		return header{}, fmt.Errorf("%w: protocol version %d, want %d", errWire, b[4], msgVersion)
	}
	h := header{typ: b[5], retry: b[6], length: binary.BigEndian.Uint32(b[7:11])}
	if h.typ != want {
		return header{}, fmt.Errorf("%w: message type %d, want %d", errWire, h.typ, want)
	}
	if h.length > maxReply {
		return header{}, fmt.Errorf("%w: %d bytes (at most %d)", errTooLong, h.length, maxReply)
	}
	return h, nil
}

// readReply reads one reply of type want from r: its header, then its
// body, which is at most maxReply bytes.
func readReply(r io.Reader, want uint8) ([]byte, error) {
	var hb [headerSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return nil, fmt.Errorf("reading the reply's header: %w", err)
	}
	h, err := parseHeader(hb, want)
	if err != nil {
		return nil, err
	}
	body := make([]byte, h.length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading the reply's body (%d bytes): %w", h.length, err)
	}
	return body, nil
}

// encodeRequest is an ENC_REQ message, header included: munged's default
// cipher, MAC and compression, no realm, any decoder.
func encodeRequest(retry uint8, payload []byte, ttl uint32) []byte {
	n := 3 + 1 + 4 + 4 + 4 + 4 + len(payload)
	b := header{typ: msgEncReq, retry: retry, length: uint32(n)}.append(make([]byte, 0, headerSize+n))
	b = append(b, defaultAlgo, defaultAlgo, defaultAlgo, 0)
	b = binary.BigEndian.AppendUint32(b, ttl)
	b = binary.BigEndian.AppendUint32(b, anyID)
	b = binary.BigEndian.AppendUint32(b, anyID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// decodeRequest is a DEC_REQ message, header included, for cred (sent
// with its NUL, as libmunge does).
func decodeRequest(retry uint8, cred string) []byte {
	n := 4 + len(cred) + 1
	b := header{typ: msgDecReq, retry: retry, length: uint32(n)}.append(make([]byte, 0, headerSize+n))
	b = binary.BigEndian.AppendUint32(b, uint32(len(cred)+1))
	b = append(b, cred...)
	return append(b, 0)
}

// status is munged's verdict in a reply: its error number (0: success)
// and message.
type status struct {
	code uint8
	msg  string
}

// err is the status as an error (nil on success).
func (s status) err() error { return codeErr(s.code, s.msg) }

// encodeReply is what an ENC_RSP body says.
type encodeReply struct {
	status
	cred string
}

// decodeReply is what a DEC_RSP body says.
type decodeReply struct {
	status
	ttl            uint32
	encoded        uint32 // time0, seconds since 1970 by the encoder's clock
	uid, gid       uint32
	payload        []byte
	cipher, mac    uint8
	zip            uint8
	realm, address []byte
}

// reader takes fields off a reply's body (big-endian); the first failure
// sticks.
type reader struct{ binread.Reader }

func newReader(body []byte) *reader { return &reader{binread.New(body, binary.BigEndian)} }

// done reports the first failure, or bytes left over, as a malformed reply.
func (r *reader) done() error {
	if err := r.Done(); err != nil {
		return fmt.Errorf("%w: %w", errWire, err)
	}
	return nil
}

func (r *reader) status() status {
	code := r.U8()
	msg := r.Bytes(int(r.U8()))
	return status{code: code, msg: cleanMessage(msg)}
}

// parseEncodeReply reads an ENC_RSP body. On success the credential must
// look like one (MUNGE:base64:).
func parseEncodeReply(body []byte) (encodeReply, error) {
	r := newReader(body)
	var rep encodeReply
	rep.status = r.status()
	data := r.Bytes(int(r.U32()))
	if err := r.done(); err != nil {
		return encodeReply{}, err
	}
	rep.cred = strings.TrimRight(string(data), "\x00\n")
	if rep.code == 0 {
		if err := checkFormat(rep.cred); err != nil {
			return encodeReply{}, fmt.Errorf("%w: the credential it made: %w", errWire, err)
		}
	}
	return rep, nil
}

// parseDecodeReply reads a DEC_RSP body.
func parseDecodeReply(body []byte) (decodeReply, error) {
	r := newReader(body)
	var rep decodeReply
	rep.status = r.status()
	rep.cipher, rep.mac, rep.zip = r.U8(), r.U8(), r.U8()
	rep.realm = r.Bytes(int(r.U8()))
	rep.ttl = r.U32()
	if n := r.U8(); n > 4 {
		r.Fail(fmt.Errorf("address of %d bytes (an IPv4 address has 4)", n))
	} else {
		rep.address = r.Bytes(int(n))
	}
	rep.encoded = r.U32()
	_ = r.U32() // time1: when munged decoded it
	rep.uid, rep.gid = r.U32(), r.U32()
	_, _ = r.U32(), r.U32() // auth_uid, auth_gid: who may decode it
	rep.payload = r.Bytes(int(r.U32()))
	if err := r.done(); err != nil {
		return decodeReply{}, err
	}
	if len(rep.payload) == 0 {
		rep.payload = nil
	}
	return rep, nil
}

// cleanMessage is munged's message without its NUL, and with anything
// unprintable replaced: it ends up in logs and on terminals.
func cleanMessage(b []byte) string {
	s := strings.TrimRight(string(b), "\x00")
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\uFFFD' {
			return '?'
		}
		return r
	}, s)
}
