package spool

import (
	"encoding/binary"
	"fmt"

	"github.com/sharq-hpc/sharq/jobid"
)

// Job ids have the form NUM, NUM[], NUM[IDX] each optionally followed by
// .SERVER: "123.lab", "123[].lab" (array parent), "123[7].lab" (subjob 7).
// NUM and IDX are decimal without leading zeros, below 2^63; package jobid
// parses them.
const (
	keyFixed  = 16 // job number (8) + sub (8)
	maxIDLen  = jobid.MaxIDLen
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

func parseID(s string) (num, sub uint64, suffix string, err error) {
	id, err := jobid.Parse(s)
	if err != nil {
		return 0, 0, "", fmt.Errorf("spool: %w: %w", ErrBadID, err)
	}
	switch id.Kind {
	case jobid.Array:
		sub = subParent
	case jobid.Sub:
		sub = id.Index + subOffset
	default:
		sub = subPlain
	}
	return id.Seq, sub, id.Server, nil
}

// idFromKey is the inverse of SortKey.
func idFromKey(k []byte) (string, error) {
	if len(k) < keyFixed || len(k) > keyFixed+maxIDLen {
		return "", fmt.Errorf("spool: key %x: bad length: %w", k, ErrCorrupt)
	}
	num := binary.BigEndian.Uint64(k[0:8])
	sub := binary.BigEndian.Uint64(k[8:16])
	suffix := string(k[keyFixed:])
	jid := jobid.ID{Seq: num, Server: suffix}
	switch {
	case sub == subPlain:
	case sub == subParent:
		jid.Kind = jobid.Array
	default:
		jid.Kind, jid.Index = jobid.Sub, sub-subOffset
	}
	id := jid.String()
	// Accept only canonical keys: re-deriving the key must give k back.
	if k2, err := SortKey(id); err != nil || string(k2) != string(k) {
		return "", fmt.Errorf("spool: key %x: not canonical: %w", k, ErrCorrupt)
	}
	return id, nil
}

// IDFromKey is the inverse of SortKey; a key that is not the SortKey of an
// id gives an error wrapping ErrCorrupt.
func IDFromKey(k []byte) (string, error) { return idFromKey(k) }
