package api

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrTooLarge is returned for a message over MaxMessage bytes.
var ErrTooLarge = errors.New("message too large")

// Decoder reads one-line JSON messages of bounded size.
type Decoder struct {
	r     *bufio.Reader
	limit int
}

// NewDecoder reads messages of at most MaxMessage bytes from r: what a
// server accepts from a peer.
func NewDecoder(r io.Reader) *Decoder { return NewDecoderLimit(r, MaxMessage) }

// NewDecoderLimit reads messages of at most limit bytes (clients read large
// qstat answers).
func NewDecoderLimit(r io.Reader, limit int) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 4<<10), limit: limit}
}

// Decode reads the next message into v. A message that is too long or not
// valid JSON is an error; io.EOF means the peer closed cleanly.
func (d *Decoder) Decode(v any) error {
	line, err := d.ReadLine()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("decode: malformed message: %w", err)
	}
	return nil
}

// Encode writes v as one line.
func Encode(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// WriteResponse writes r as one line followed by its Summary as raw bytes
// (r.Payload says how many).
func WriteResponse(w io.Writer, r *Response) error {
	r.Payload = len(r.Summary)
	if err := Encode(w, r); err != nil {
		return err
	}
	if r.Payload == 0 {
		return nil
	}
	_, err := w.Write(r.Summary)
	return err
}

// ReadResponse reads what WriteResponse wrote into r, replacing what r
// held.
func (d *Decoder) ReadResponse(r *Response) error {
	var w responseWire
	if err := d.Decode(&w); err != nil {
		return err
	}
	if err := w.response(r); err != nil {
		return err
	}
	if r.Payload < 0 || r.Payload > d.limit {
		return fmt.Errorf("decode: payload of %d bytes: %w (limit %d bytes)", r.Payload, ErrTooLarge, d.limit)
	}
	if r.Payload == 0 {
		return nil
	}
	r.Summary = make([]byte, r.Payload)
	if _, err := io.ReadFull(d.r, r.Summary); err != nil {
		return fmt.Errorf("decode: payload: %w", err)
	}
	return nil
}

// ReadLine returns the next message as raw bytes, newline included, for a
// reader that must see the exact bytes (the TCP client port digests the
// request line before decoding it). The slice is the caller's.
func (d *Decoder) ReadLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := d.r.ReadSlice('\n')
		if len(line)+len(chunk) > d.limit {
			return nil, fmt.Errorf("decode: %w (limit %d bytes)", ErrTooLarge, d.limit)
		}
		line = append(line, chunk...)
		if err == nil {
			return line, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(line) > 0 {
			return nil, fmt.Errorf("decode: %w", io.ErrUnexpectedEOF)
		}
		return nil, err
	}
}

// Wait blocks until the next message has begun to arrive (a byte of it is
// buffered) or the reader fails (io.EOF, a deadline), and consumes
// nothing: after a deadline the next Decode starts from the same byte.
func (d *Decoder) Wait() error {
	_, err := d.r.Peek(1)
	return err
}

// SetLimit changes the bound on the next messages.
func (d *Decoder) SetLimit(limit int) { d.limit = limit }
