package spool

import (
	"encoding/binary"
	"fmt"
	"time"
)

// A stored value is a fixed header followed by the record's data:
//
//	[0]     value format (valueFormat)
//	[1]     flags: bit 0 set when the record is finished
//	[2:10]  Finished, Unix seconds, big endian two's complement (0 when active)
//	[10:14] Finished, nanoseconds within the second, big endian
//	[14:]   Data
const (
	valueFormat  = 1
	valueHeader  = 14
	flagFinished = 1 << 0
)

func encodeValue(r Record) []byte {
	v := make([]byte, valueHeader+len(r.Data))
	v[0] = valueFormat
	if !r.Finished.IsZero() {
		v[1] = flagFinished
		binary.BigEndian.PutUint64(v[2:10], uint64(r.Finished.Unix()))
		binary.BigEndian.PutUint32(v[10:14], uint32(r.Finished.Nanosecond()))
	}
	copy(v[valueHeader:], r.Data)
	return v
}

// decodeFinished decodes a value's header: its Finished time, zero when the
// record is active.
func decodeFinished(v []byte) (time.Time, error) {
	if len(v) < valueHeader {
		return time.Time{}, fmt.Errorf("value of %d bytes is shorter than its header: %w", len(v), ErrCorrupt)
	}
	if v[0] != valueFormat {
		return time.Time{}, fmt.Errorf("unknown value format %d: %w", v[0], ErrCorrupt)
	}
	sec := int64(binary.BigEndian.Uint64(v[2:10]))
	nsec := binary.BigEndian.Uint32(v[10:14])
	switch v[1] {
	case 0:
		if sec != 0 || nsec != 0 {
			return time.Time{}, fmt.Errorf("active record carries a finish time: %w", ErrCorrupt)
		}
		return time.Time{}, nil
	case flagFinished:
		if nsec >= 1e9 {
			return time.Time{}, fmt.Errorf("finish nanoseconds %d out of range: %w", nsec, ErrCorrupt)
		}
		t := time.Unix(sec, int64(nsec)).UTC()
		if t.IsZero() {
			return time.Time{}, fmt.Errorf("finished record with zero finish time: %w", ErrCorrupt)
		}
		return t, nil
	default:
		return time.Time{}, fmt.Errorf("unknown value flags %#x: %w", v[1], ErrCorrupt)
	}
}

// decodeValue decodes a stored value into a Record with the given id. Data
// is copied: v may belong to a transaction.
func decodeValue(id string, v []byte) (Record, error) {
	fin, err := decodeFinished(v)
	if err != nil {
		return Record{}, fmt.Errorf("spool: job %s: %w", id, err)
	}
	data := make([]byte, len(v)-valueHeader)
	copy(data, v[valueHeader:])
	return Record{ID: id, Data: data, Finished: fin}, nil
}

// finishedKey is the key of a record in the finished index: Finished as
// sortable bytes (seconds with the sign bit flipped, then nanoseconds), then
// the record's SortKey.
func finishedKey(fin time.Time, key []byte) []byte {
	k := make([]byte, 12+len(key))
	binary.BigEndian.PutUint64(k[0:8], uint64(fin.Unix())^(1<<63))
	binary.BigEndian.PutUint32(k[8:12], uint32(fin.Nanosecond()))
	copy(k[12:], key)
	return k
}

// splitFinishedKey is the inverse of finishedKey.
func splitFinishedKey(k []byte) (time.Time, []byte, error) {
	if len(k) < 12+keyFixed {
		return time.Time{}, nil, fmt.Errorf("spool: finished index key %x too short: %w", k, ErrCorrupt)
	}
	sec := int64(binary.BigEndian.Uint64(k[0:8]) ^ (1 << 63))
	nsec := binary.BigEndian.Uint32(k[8:12])
	if nsec >= 1e9 {
		return time.Time{}, nil, fmt.Errorf("spool: finished index key %x: nanoseconds out of range: %w", k, ErrCorrupt)
	}
	return time.Unix(sec, int64(nsec)), k[12:], nil
}

// EncodeValue is the stored form of r (without its id) that every persistent
// backend writes: the header above, then Data.
func EncodeValue(r Record) []byte { return encodeValue(r) }

// DecodeValue is the inverse of EncodeValue for the record id; Data is
// copied. A value that does not decode gives an error wrapping ErrCorrupt.
func DecodeValue(id string, v []byte) (Record, error) { return decodeValue(id, v) }
