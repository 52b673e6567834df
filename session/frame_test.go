package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	big := bytes.Repeat([]byte("x"), MaxData+10)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.JSON(TypeHello, Hello{V: Version, Token: strings.Repeat("a", TokenLen), TTY: true, Rows: 24, Cols: 80, Term: "xterm"}))
	must(w.Data(TypeStdout, big))
	must(w.Resize(50, 132))
	must(w.Frame(TypeEOF, nil))
	must(w.Text(TypeNotice, strings.Repeat("n", maxText+5)))

	f, err := ReadFrame(&buf)
	must(err)
	var h Hello
	must(Decode(f, &h))
	must(h.Check())
	if !h.TTY || h.Rows != 24 || h.Cols != 80 || h.Term != "xterm" {
		t.Fatalf("hello %+v", h)
	}
	var got []byte
	for range 2 {
		f, err := ReadFrame(&buf)
		must(err)
		if f.Type != TypeStdout {
			t.Fatalf("type %d", f.Type)
		}
		got = append(got, f.Payload...)
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("data: %d bytes back of %d", len(got), len(big))
	}
	f, err = ReadFrame(&buf)
	must(err)
	rows, cols, err := ParseResize(f.Payload)
	must(err)
	if rows != 50 || cols != 132 {
		t.Fatalf("resize %dx%d", rows, cols)
	}
	f, err = ReadFrame(&buf)
	must(err)
	if f.Type != TypeEOF || len(f.Payload) != 0 {
		t.Fatalf("eof frame %+v", f)
	}
	f, err = ReadFrame(&buf)
	must(err)
	if f.Type != TypeNotice || len(f.Payload) != maxText {
		t.Fatalf("notice of %d bytes", len(f.Payload))
	}
	if _, err := ReadFrame(&buf); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}

func header(t Type, n uint32) []byte {
	b := []byte{byte(t), 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], n)
	return b
}

func TestReadFrameRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"unknown type", header(99, 0), ErrFrame},
		{"type zero", header(0, 0), ErrFrame},
		{"oversized data", header(TypeStdin, MaxData+1), ErrFrame},
		{"huge length", header(TypeStdout, 1<<31), ErrFrame},
		{"oversized hello", header(TypeHello, maxText+1), ErrFrame},
		{"eof with payload", header(TypeEOF, 1), ErrFrame},
		{"short resize", append(header(TypeResize, 2), 0, 1), ErrFrame},
		{"truncated payload", append(header(TypeStdin, 10), 'a'), io.ErrUnexpectedEOF},
		{"truncated header", []byte{byte(TypeStdin), 0}, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFrame(bytes.NewReader(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

func TestHelloCheck(t *testing.T) {
	tok := strings.Repeat("f", TokenLen)
	for _, tc := range []struct {
		name string
		h    Hello
		ok   bool
	}{
		{"good", Hello{V: Version, Token: tok, Term: "xterm-256color"}, true},
		{"version", Hello{V: 2, Token: tok}, false},
		{"short token", Hello{V: Version, Token: "abc"}, false},
		{"term escape", Hello{V: Version, Token: tok, Term: "x\x1b[2J"}, false},
		{"term long", Hello{V: Version, Token: tok, Term: strings.Repeat("x", 65)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.h.Check(); (err == nil) != tc.ok {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

func TestDecodeRefusesUnknownFields(t *testing.T) {
	var h Hello
	if err := Decode(Frame{Type: TypeHello, Payload: []byte(`{"v":1,"uid":0}`)}, &h); !errors.Is(err, ErrFrame) {
		t.Fatalf("err %v", err)
	}
	if err := Decode(Frame{Type: TypeHello, Payload: []byte(`{"v":1} {}`)}, &h); !errors.Is(err, ErrFrame) {
		t.Fatalf("trailing: err %v", err)
	}
}

// FuzzReadFrame: no input makes ReadFrame panic, allocate past the limits,
// or return a frame its own writer would not write.
func FuzzReadFrame(f *testing.F) {
	var seed bytes.Buffer
	w := NewWriter(&seed)
	w.JSON(TypeHello, Hello{V: Version, Token: strings.Repeat("a", TokenLen)})
	w.Resize(1, 2)
	w.Data(TypeStdin, []byte("ls\n"))
	f.Add(seed.Bytes())
	f.Add(header(TypeStdout, 1<<31))
	f.Add(header(TypeResize, 4))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			fr, err := ReadFrame(r)
			if err != nil {
				return
			}
			if len(fr.Payload) > limit(fr.Type) {
				t.Fatalf("type %d with %d bytes", fr.Type, len(fr.Payload))
			}
			var out bytes.Buffer
			if err := NewWriter(&out).Frame(fr.Type, fr.Payload); err != nil {
				t.Fatalf("a frame read cannot be written back: %v", err)
			}
			switch fr.Type {
			case TypeHello:
				var h Hello
				if Decode(fr, &h) == nil {
					h.Check()
				}
			case TypeExit:
				var e Exit
				Decode(fr, &e)
			case TypeResize:
				if _, _, err := ParseResize(fr.Payload); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
