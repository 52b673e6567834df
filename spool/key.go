package spool

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Job ids have the form NUM, NUM[], NUM[IDX] each optionally followed by
// .SERVER: "123.lab", "123[].lab" (array parent), "123[7].lab" (subjob 7).
// NUM and IDX are decimal without leading zeros, below 2^63.
const (
	keyFixed  = 16  // job number (8) + sub (8)
	maxIDLen  = 255 // bytes
	maxNumber = 1<<63 - 1
	subPlain  = 0 // "123"
	subParent = 1 // "123[]"
	subOffset = 2 // "123[i]" is stored as i+subOffset
)

// SortKey returns the storage key of a job id: the job number (8 bytes big
// endian), a sub-job field (8 bytes big endian: 0 for a plain job, 1 for an
// array parent "N[]", i+2 for subjob "N[i]"), then the server suffix without
// its dot. Byte order of keys is numeric job order with each array parent
// followed by its subjobs by index. The mapping is one to one; ids that do not
// parse give an error wrapping ErrBadID.
func SortKey(id string) ([]byte, error) {
	num, sub, suffix, err := parseID(id)
	if err != nil {
		return nil, err
	}
	k := make([]byte, keyFixed+len(suffix))
	binary.BigEndian.PutUint64(k[0:8], num)
	binary.BigEndian.PutUint64(k[8:16], sub)
	copy(k[keyFixed:], suffix)
	return k, nil
}

// JobNumber returns the job number of an id ("123[7].lab" -> 123).
func JobNumber(id string) (uint64, error) {
	num, _, _, err := parseID(id)
	return num, err
}

func badID(id, why string) error {
	return fmt.Errorf("spool: job id %q: %s: %w", id, why, ErrBadID)
}

func parseID(id string) (num, sub uint64, suffix string, err error) {
	if id == "" {
		return 0, 0, "", badID(id, "empty")
	}
	if len(id) > maxIDLen {
		return 0, 0, "", badID(id, "too long")
	}
	rest := id
	numStr, rest := leadingDigits(rest)
	num, err = parseDecimal(numStr)
	if err != nil {
		return 0, 0, "", badID(id, "job number: "+err.Error())
	}
	sub = subPlain
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return 0, 0, "", badID(id, "unclosed [")
		}
		idxStr := rest[1:end]
		rest = rest[end+1:]
		if idxStr == "" {
			sub = subParent
		} else {
			idx, err := parseDecimal(idxStr)
			if err != nil {
				return 0, 0, "", badID(id, "array index: "+err.Error())
			}
			sub = idx + subOffset
		}
	}
	switch {
	case rest == "":
	case rest[0] != '.':
		return 0, 0, "", badID(id, "unexpected "+strconv.Quote(rest))
	case len(rest) == 1:
		return 0, 0, "", badID(id, "empty server after '.'")
	default:
		suffix = rest[1:]
		if strings.ContainsAny(suffix, "[]") {
			return 0, 0, "", badID(id, "brackets in server name")
		}
	}
	return num, sub, suffix, nil
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

func parseDecimal(s string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("missing")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("not a decimal number")
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("leading zero")
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > maxNumber {
		return 0, fmt.Errorf("out of range")
	}
	return v, nil
}

// idFromKey is the inverse of SortKey.
func idFromKey(k []byte) (string, error) {
	if len(k) < keyFixed || len(k) > keyFixed+maxIDLen {
		return "", fmt.Errorf("spool: key %x: bad length: %w", k, ErrCorrupt)
	}
	num := binary.BigEndian.Uint64(k[0:8])
	sub := binary.BigEndian.Uint64(k[8:16])
	suffix := string(k[keyFixed:])
	var b strings.Builder
	b.WriteString(strconv.FormatUint(num, 10))
	switch {
	case sub == subPlain:
	case sub == subParent:
		b.WriteString("[]")
	default:
		b.WriteByte('[')
		b.WriteString(strconv.FormatUint(sub-subOffset, 10))
		b.WriteByte(']')
	}
	if suffix != "" {
		b.WriteByte('.')
		b.WriteString(suffix)
	}
	id := b.String()
	// Accept only canonical keys: re-deriving the key must give k back.
	if k2, err := SortKey(id); err != nil || string(k2) != string(k) {
		return "", fmt.Errorf("spool: key %x: not canonical: %w", k, ErrCorrupt)
	}
	return id, nil
}

// IDFromKey is the inverse of SortKey; a key that is not the SortKey of an
// id gives an error wrapping ErrCorrupt.
func IDFromKey(k []byte) (string, error) { return idFromKey(k) }
