package jobid

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds of ids.
const (
	// MaxIDLen bounds a canonical id in bytes.
	MaxIDLen = 255
	// MaxSeq is the largest job number.
	MaxSeq = 1<<63 - 1
)

// ErrBadID is wrapped by every id parsing error.
var ErrBadID = errors.New("bad job id")

// Kind says what an id names.
type Kind uint8

const (
	Plain Kind = iota // "123"
	Array             // "123[]", an array job
	Sub               // "123[7]", one subjob of an array
)

// ID is a parsed canonical job id.
type ID struct {
	Seq    uint64
	Kind   Kind
	Index  uint64 // subjob index (Kind Sub), at most MaxSeq
	Server string // without the dot; "" when absent
}

// Parse parses a canonical id: what the controller hands out and the spool
// stores. Errors wrap ErrBadID.
func Parse(s string) (ID, error) {
	var id ID
	if s == "" {
		return id, bad(s, "empty")
	}
	if len(s) > MaxIDLen {
		return id, bad(s, "too long")
	}
	numStr, rest := leadingDigits(s)
	var err error
	if id.Seq, err = decimal(numStr); err != nil {
		return id, bad(s, "job number: "+err.Error())
	}
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return id, bad(s, "unclosed [")
		}
		idxStr := rest[1:end]
		rest = rest[end+1:]
		id.Kind = Array
		if idxStr != "" {
			if id.Index, err = decimal(idxStr); err != nil {
				return id, bad(s, "array index: "+err.Error())
			}
			id.Kind = Sub
		}
	}
	if id.Server, err = server(s, rest); err != nil {
		return id, err
	}
	return id, nil
}

// server checks what follows the number and brackets: "" or ".NAME".
func server(s, rest string) (string, error) {
	switch {
	case rest == "":
		return "", nil
	case rest[0] != '.':
		return "", bad(s, "unexpected "+strconv.Quote(rest))
	case len(rest) == 1:
		return "", bad(s, "empty server after '.'")
	case strings.ContainsAny(rest[1:], "[]"):
		return "", bad(s, "brackets in server name")
	}
	return rest[1:], nil
}

// String prints the id canonically; Parse(id.String()) == id.
func (id ID) String() string {
	b := make([]byte, 0, 32)
	b = strconv.AppendUint(b, id.Seq, 10)
	switch id.Kind {
	case Array:
		b = append(b, "[]"...)
	case Sub:
		b = append(b, '[')
		b = strconv.AppendUint(b, id.Index, 10)
		b = append(b, ']')
	}
	if id.Server != "" {
		b = append(b, '.')
		b = append(b, id.Server...)
	}
	return string(b)
}

// Job is the id of plain job seq on server.
func Job(seq uint64, server string) string { return ID{Seq: seq, Server: server}.String() }

// ArrayJob is the id of array job seq on server, "seq[].server".
func ArrayJob(seq uint64, server string) string {
	return ID{Seq: seq, Kind: Array, Server: server}.String()
}

// Subjob is the id of subjob i of array seq, "seq[i].server".
func Subjob(seq uint64, i int, server string) string {
	return ID{Seq: seq, Kind: Sub, Index: uint64(i), Server: server}.String()
}

// IsArray says whether s names a whole array ("123[].lab"). It does not
// validate s.
func IsArray(s string) bool { return strings.Contains(s, "[]") }

// SubOf returns the id of subjob i of the array id array ("123[].lab").
func SubOf(array string, i int) string {
	return strings.Replace(array, "[]", "["+strconv.Itoa(i)+"]", 1)
}

// SplitSub splits a subjob id "123[7].lab" into its array's id "123[].lab"
// and 7. ok is false for anything that is not a subjob id with a canonical
// index (no sign, no leading zero, at most MaxIndex).
func SplitSub(s string) (array string, i int, ok bool) {
	open := strings.IndexByte(s, '[')
	if open < 0 {
		return "", 0, false
	}
	end := strings.IndexByte(s[open:], ']')
	if end <= 1 {
		return "", 0, false
	}
	end += open
	idx, err := index(s[open+1 : end])
	if err != nil {
		return "", 0, false
	}
	return s[:open+1] + s[end:], idx, true
}

func bad(s, why string) error { return fmt.Errorf("job id %q: %s: %w", s, why, ErrBadID) }

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// decimal parses a canonical decimal number of at most MaxSeq.
func decimal(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("missing")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not a decimal number")
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, errors.New("leading zero")
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > MaxSeq {
		return 0, errors.New("out of range")
	}
	return v, nil
}

// index parses a canonical array index of at most MaxIndex.
func index(s string) (int, error) {
	if len(s) > 9 {
		return 0, fmt.Errorf("index %.12q is above %d", s, MaxIndex)
	}
	v, err := decimal(s)
	if err != nil {
		return 0, fmt.Errorf("index %q: %w", s, err)
	}
	if v > MaxIndex {
		return 0, fmt.Errorf("index %d is above %d", v, MaxIndex)
	}
	return int(v), nil
}
