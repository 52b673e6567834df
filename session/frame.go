package session

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Type is a frame's type.
type Type uint8

const (
	TypeHello   Type = 1  // client -> node, first: Hello (JSON)
	TypeReady   Type = 2  // node -> client: Ready (JSON); the session runs
	TypeRefused Type = 3  // node -> client: why not (text); the node closes
	TypeStdin   Type = 4  // client -> node: input bytes
	TypeStdout  Type = 5  // node -> client: output bytes (a terminal's only stream)
	TypeStderr  Type = 6  // node -> client: error output bytes (without a terminal)
	TypeResize  Type = 7  // client -> node: 2+2 bytes, rows and columns
	TypeEOF     Type = 8  // client -> node: no more input
	TypeNotice  Type = 9  // node -> client: a message for the user (walltime, preemption)
	TypeExit    Type = 10 // node -> client: Exit (JSON); the node closes
)

// Size limits.
const (
	// MaxPayload bounds every frame's payload.
	MaxPayload = 64 << 10
	// MaxData is what one Stdin/Stdout/Stderr frame carries at most; a
	// writer splits longer writes.
	MaxData = 32 << 10
	// maxText bounds Refused and Notice texts and the JSON frames.
	maxText = 8 << 10
)

// Errors of ReadFrame.
var (
	ErrFrame = errors.New("bad session frame")
)

// limit is the largest payload of each type; 0 = unknown type.
func limit(t Type) int {
	switch t {
	case TypeStdin, TypeStdout, TypeStderr:
		return MaxData
	case TypeHello, TypeReady, TypeRefused, TypeNotice, TypeExit:
		return maxText
	case TypeResize:
		return 4
	case TypeEOF:
		return 0
	}
	return -1
}

// Frame is one frame.
type Frame struct {
	Type    Type
	Payload []byte
}

// ReadFrame reads one frame. It refuses an unknown type, a payload longer
// than the type allows (before reading it) and a Resize of another size.
func ReadFrame(r io.Reader) (Frame, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return Frame{}, err
	}
	t := Type(h[0])
	n := binary.BigEndian.Uint32(h[1:])
	max := limit(t)
	switch {
	case max < 0:
		return Frame{}, fmt.Errorf("%w: unknown type %d", ErrFrame, h[0])
	case n > uint32(max):
		return Frame{}, fmt.Errorf("%w: type %d with %d bytes (at most %d)", ErrFrame, t, n, max)
	case t == TypeResize && n != 4:
		return Frame{}, fmt.Errorf("%w: resize of %d bytes", ErrFrame, n)
	}
	f := Frame{Type: t}
	if n > 0 {
		f.Payload = make([]byte, n)
		if _, err := io.ReadFull(r, f.Payload); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return Frame{}, err
		}
	}
	return f, nil
}

// Writer writes frames; its methods may be called from several goroutines.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Frame writes one frame whole.
func (w *Writer) Frame(t Type, payload []byte) error {
	if max := limit(t); max < 0 || len(payload) > max {
		return fmt.Errorf("%w: writing type %d with %d bytes", ErrFrame, t, len(payload))
	}
	buf := make([]byte, 5+len(payload))
	buf[0] = byte(t)
	binary.BigEndian.PutUint32(buf[1:], uint32(len(payload)))
	copy(buf[5:], payload)
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(buf)
	return err
}

// JSON writes v as the payload of a frame of type t.
func (w *Writer) JSON(t Type, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("session frame %d: %w", t, err)
	}
	return w.Frame(t, b)
}

// Text writes a text frame (Refused, Notice), cut to what the type allows.
func (w *Writer) Text(t Type, s string) error {
	if len(s) > maxText {
		s = s[:maxText]
	}
	return w.Frame(t, []byte(s))
}

// Data writes p as frames of type t of at most MaxData bytes each.
func (w *Writer) Data(t Type, p []byte) error {
	for len(p) > 0 {
		n := min(len(p), MaxData)
		if err := w.Frame(t, p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// Resize writes a window size.
func (w *Writer) Resize(rows, cols uint16) error {
	var b [4]byte
	binary.BigEndian.PutUint16(b[:], rows)
	binary.BigEndian.PutUint16(b[2:], cols)
	return w.Frame(TypeResize, b[:])
}

// Stream is an io.Writer that sends each write as frames of one type.
type Stream struct {
	W    *Writer
	Type Type
}

func (s Stream) Write(p []byte) (int, error) {
	if err := s.W.Data(s.Type, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ParseResize reads a Resize frame's payload.
func ParseResize(p []byte) (rows, cols uint16, err error) {
	if len(p) != 4 {
		return 0, 0, fmt.Errorf("%w: resize of %d bytes", ErrFrame, len(p))
	}
	return binary.BigEndian.Uint16(p), binary.BigEndian.Uint16(p[2:]), nil
}

// Decode reads a JSON frame's payload into v, refusing unknown fields.
func Decode(f Frame, v any) error {
	dec := json.NewDecoder(bytes.NewReader(f.Payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: type %d: %w", ErrFrame, f.Type, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: type %d: data after the JSON value", ErrFrame, f.Type)
	}
	return nil
}
