package spool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// walStep is one write of a scripted sequence, applied alike to a Bolt
// spool and to the reference Memory spool.
type walStep struct {
	name string
	do   func(ctx context.Context, s Spool) error
}

func stepPut(recs ...Record) walStep {
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = r.ID
	}
	return walStep{"put " + strings.Join(names, ","), func(ctx context.Context, s Spool) error { return s.Put(ctx, recs...) }}
}

func stepDelete(ids ...string) walStep {
	return walStep{"delete " + strings.Join(ids, ","), func(ctx context.Context, s Spool) error { return s.Delete(ctx, ids...) }}
}

func stepState(key string, val []byte) walStep {
	return walStep{fmt.Sprintf("state %s=%q", key, val), func(ctx context.Context, s Spool) error { return s.SetState(ctx, key, val) }}
}

func stepNext(n int) walStep {
	return walStep{fmt.Sprintf("nextids %d", n), func(ctx context.Context, s Spool) error { _, err := s.NextIDs(ctx, n); return err }}
}

func walRecord(id string, ver int, fin time.Time) Record {
	return Record{ID: id, Data: fmt.Appendf(nil, "%s v%d", id, ver), Finished: fin}
}

var walStateKeys = []string{"drained", "usage"}

// dumpSpool describes everything a spool holds: each record by Get (for
// the ids in ids) and by Scan, the state keys, and the next job number.
// It calls NextIDs: the spool is changed.
func dumpSpool(t *testing.T, s Spool, ids []string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, id := range ids {
		r, err := s.Get(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			t.Fatalf("Get(%s): %v", id, err)
		}
		fmt.Fprintf(&b, "get %s %s fin=%d\n", r.ID, dumpData(r.Data), r.Finished.UnixNano())
	}
	if err := s.Scan(ctx, func(r Record) error {
		fmt.Fprintf(&b, "scan %s %s fin=%d\n", r.ID, dumpData(r.Data), r.Finished.UnixNano())
		return nil
	}); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	for _, k := range walStateKeys {
		v, err := s.State(ctx, k)
		if err != nil {
			t.Fatalf("State(%s): %v", k, err)
		}
		fmt.Fprintf(&b, "state %s %s nil=%v\n", k, dumpData(v), v == nil)
	}
	next, err := s.NextIDs(ctx, 1)
	if err != nil {
		t.Fatalf("NextIDs: %v", err)
	}
	fmt.Fprintf(&b, "next %d\n", next)
	return b.String()
}

// dumpData shows short data as it is and long data by its size and hash.
func dumpData(d []byte) string {
	if len(d) <= 64 {
		return fmt.Sprintf("%q", d)
	}
	return fmt.Sprintf("%d bytes sha256 %x", len(d), sha256.Sum256(d))
}

// memoryDump is dumpSpool of a Memory spool after steps.
func memoryDump(t *testing.T, steps []walStep, ids []string) string {
	t.Helper()
	m := NewMemory()
	for _, st := range steps {
		if err := st.do(context.Background(), m); err != nil {
			t.Fatalf("memory %s: %v", st.name, err)
		}
	}
	return dumpSpool(t, m, ids)
}

var walT0 = time.Date(2026, 3, 1, 12, 0, 0, 5, time.UTC)

// walScript is the scripted sequence of the log damage tests: every op
// kind, a delete of a record only in the overlay, overwrites.
var walScript = []walStep{
	stepPut(walRecord("1.lab", 1, time.Time{}), walRecord("2.lab", 1, walT0)),
	stepNext(5),
	stepState("drained", []byte(`["n1"]`)),
	stepDelete("1.lab", "9.lab"),
	stepPut(walRecord("3[].lab", 1, time.Time{}), walRecord("3[0].lab", 1, walT0)),
	stepState("drained", nil),
	stepState("usage", []byte{}),
	stepPut(walRecord("2.lab", 2, time.Time{})),
	stepNext(2),
	stepPut(walRecord("40.lab", 1, time.Time{})),
}

var walScriptIDs = []string{"1.lab", "2.lab", "3[].lab", "3[0].lab", "9.lab", "40.lab"}

// writeScript runs steps on a new spool in dir, abandons it (as kill -9
// would) and returns the log offset after each step.
func writeScript(t *testing.T, dir string, steps []walStep) []int64 {
	t.Helper()
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	for _, st := range steps {
		if err := st.do(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		ends = append(ends, s.wal.pos)
	}
	if s.applied != 0 {
		t.Fatalf("the script checkpointed (applied %d): the test needs every step in the log", s.applied)
	}
	if err := s.abandon(); err != nil {
		t.Fatal(err)
	}
	return ends
}

// copySpool copies jobs.db of src into a new directory with wal as its log.
func copySpool(t *testing.T, src string, wal []byte) string {
	t.Helper()
	dst := t.TempDir()
	db, err := os.ReadFile(filepath.Join(src, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, FileName), db, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, WALName), wal, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestWALTornTail cuts the log at every byte of its last frames, as a
// crash in the middle of a write leaves it: the spool reopens with exactly
// the writes whose frames are whole.
func TestWALTornTail(t *testing.T) {
	src := t.TempDir()
	ends := writeScript(t, src, walScript)
	wal, err := os.ReadFile(filepath.Join(src, WALName))
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(walScript)+1)
	for k := range want {
		want[k] = memoryDump(t, walScript[:k], walScriptIDs)
	}
	from := ends[len(ends)-5] // the last four frames
	for cut := from; cut <= ends[len(ends)-1]; cut++ {
		// The writes whose frames end at or before the cut are whole; with
		// zeros past the cut, so is one whose cut-off bytes were zeros.
		zeroRun := cut
		for zeroRun < int64(len(wal)) && wal[zeroRun] == 0 {
			zeroRun++
		}
		for _, variant := range []struct {
			name string
			log  []byte
			k    int
		}{
			// The file keeps its size: zeros past the cut (preallocated).
			{"zeros", append(slices.Clone(wal[:cut]), make([]byte, 4096)...), walWhole(ends, zeroRun)},
			// The file ends at the cut.
			{"truncated", slices.Clone(wal[:cut]), walWhole(ends, cut)},
		} {
			k := variant.k
			dir := copySpool(t, src, variant.log)
			s, err := Open(dir, Options{NoSync: true})
			if err != nil {
				t.Fatalf("cut at %d (%s): Open: %v", cut, variant.name, err)
			}
			if got := dumpSpool(t, s, walScriptIDs); got != want[k] {
				t.Fatalf("cut at %d (%s): spool holds\n%s\nwant the first %d writes:\n%s", cut, variant.name, got, k, want[k])
			}
			s.Close()
		}
	}
}

// walWhole is how many frames end at or before cut.
func walWhole(ends []int64, cut int64) int {
	k, _ := slices.BinarySearch(ends, cut+1)
	return k
}

// TestWALDamage flips every bit pattern of one byte at every offset of the
// last two frames: damage to the last frame is a torn write (it is
// dropped), damage before it is corruption that Open reports with the
// file and offset.
func TestWALDamage(t *testing.T) {
	src := t.TempDir()
	ends := writeScript(t, src, walScript)
	wal, err := os.ReadFile(filepath.Join(src, WALName))
	if err != nil {
		t.Fatal(err)
	}
	n := len(walScript)
	wal = wal[:ends[n-1]+4096] // the zeros past it read as the end of the file does
	lastDropped := memoryDump(t, walScript[:n-1], walScriptIDs)
	for off := ends[n-3]; off < ends[n-1]; off++ {
		last := off >= ends[n-2]
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			damaged := slices.Clone(wal)
			damaged[off] ^= mask
			dir := copySpool(t, src, damaged)
			s, err := Open(dir, Options{NoSync: true})
			if !last {
				if err == nil {
					s.Close()
					t.Fatalf("byte %d ^ %#x (frame before the last): Open succeeded, want ErrCorrupt", off, mask)
				}
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), WALName) || !strings.Contains(err.Error(), "offset") {
					t.Fatalf("byte %d ^ %#x: Open: %v; want ErrCorrupt naming %s and the offset", off, mask, err, WALName)
				}
				continue
			}
			if err != nil {
				t.Fatalf("byte %d ^ %#x (last frame): Open: %v", off, mask, err)
			}
			got := dumpSpool(t, s, walScriptIDs)
			s.Close()
			if got != lastDropped {
				t.Fatalf("byte %d ^ %#x (last frame): spool holds\n%s\nwant all but the last write:\n%s", off, mask, got, lastDropped)
			}
		}
	}
}

func TestWALHeader(t *testing.T) {
	src := t.TempDir()
	writeScript(t, src, walScript[:2])
	wal, err := os.ReadFile(filepath.Join(src, WALName))
	if err != nil {
		t.Fatal(err)
	}
	newer := slices.Clone(wal)
	binary.LittleEndian.PutUint32(newer[8:12], walVersion+1)
	binary.LittleEndian.PutUint32(newer[28:32], crc32c(newer[:28]))
	tests := []struct {
		name string
		log  []byte
		want error
		msg  string
	}{
		{"newer version", newer, ErrSchema, "log format 2"},
		{"foreign file", append([]byte("#!/bin/sh\n"), wal[10:]...), ErrSchema, "not a sharq write-ahead log"},
		{"header damaged", func() []byte { b := slices.Clone(wal); b[20] ^= 1; return b }(), ErrCorrupt, "header checksum"},
		{"short", wal[:10], ErrCorrupt, "short"},
		{"empty", []byte{}, ErrCorrupt, "short"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(copySpool(t, src, tc.log), Options{NoSync: true})
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded, want %v", tc.want)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), WALName) {
				t.Fatalf("Open: %v; want %v naming %s and saying %q", err, tc.want, WALName, tc.msg)
			}
		})
	}
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// TestWALMatchesMemory is a property test: random writes with random
// checkpoint limits and random crashes (abandoned spools, reopened) leave
// the Bolt spool holding what the Memory spool holds after the same
// writes.
func TestWALMatchesMemory(t *testing.T) {
	const rounds, opsPerRound = 8, 40
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x7a1))
			dir := t.TempDir()
			mem := NewMemory()
			ctx := context.Background()
			ids := []string{}
			for round := range rounds {
				opts := Options{NoSync: true, limits: walLimits{
					entries: rng.IntN(30),
					bytes:   1 << 20,
					logSize: int64(walHeaderSize + 512 + rng.IntN(16<<10)),
				}}
				s, err := Open(dir, opts)
				if err != nil {
					t.Fatalf("round %d: Open: %v", round, err)
				}
				for i := range opsPerRound {
					st := randomStep(rng, &ids, round*opsPerRound+i)
					if err := st.do(ctx, s); err != nil {
						t.Fatalf("round %d: %s: %v", round, st.name, err)
					}
					if err := st.do(ctx, mem); err != nil {
						t.Fatalf("memory: %s: %v", st.name, err)
					}
				}
				if rng.IntN(2) == 0 {
					err = s.abandon()
				} else {
					err = s.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
				s, err = Open(dir, opts)
				if err != nil {
					t.Fatalf("round %d: reopen: %v", round, err)
				}
				got, want := dumpSpool(t, s, ids), dumpSpool(t, mem, ids)
				if got != want {
					t.Fatalf("round %d: spool holds\n%s\nmemory holds\n%s", round, got, want)
				}
				if err := s.abandon(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func randomStep(rng *rand.Rand, ids *[]string, n int) walStep {
	pick := func() string {
		if len(*ids) == 0 || rng.IntN(5) == 0 {
			id := fmt.Sprintf("%d.lab", 1+rng.IntN(200))
			if !slices.Contains(*ids, id) {
				*ids = append(*ids, id)
			}
			return id
		}
		return (*ids)[rng.IntN(len(*ids))]
	}
	switch op := rng.IntN(10); {
	case op < 5:
		var recs []Record
		for range 1 + rng.IntN(4) {
			var fin time.Time
			if rng.IntN(3) == 0 {
				fin = walT0.Add(time.Duration(rng.IntN(100)) * time.Second)
			}
			recs = append(recs, walRecord(pick(), n, fin))
		}
		return stepPut(recs...)
	case op < 7:
		return stepDelete(pick(), pick())
	case op < 8:
		if rng.IntN(3) == 0 {
			return stepState(walStateKeys[rng.IntN(2)], nil)
		}
		return stepState(walStateKeys[rng.IntN(2)], bytes.Repeat([]byte{byte(n)}, rng.IntN(300)))
	case op < 9:
		return stepNext(1 + rng.IntN(3))
	default:
		before := walT0.Add(time.Duration(rng.IntN(100)) * time.Second)
		return walStep{"purge", func(ctx context.Context, s Spool) error { _, err := s.Purge(ctx, before); return err }}
	}
}

// TestWALLargePut: a Put too large for one frame is committed to jobs.db
// directly, and what was logged before it stays in order around it.
func TestWALLargePut(t *testing.T) {
	dir := t.TempDir()
	big := make([]Record, 5)
	for i := range big {
		big[i] = Record{ID: fmt.Sprintf("%d.lab", 10+i), Data: bytes.Repeat([]byte{byte(i)}, MaxRecordSize)}
	}
	steps := []walStep{
		stepPut(walRecord("10.lab", 1, time.Time{}), walRecord("1.lab", 1, time.Time{})),
		stepPut(big...),
		stepDelete("1.lab"),
		stepPut(walRecord("11.lab", 2, time.Time{})),
	}
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if err := st.do(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	if s.applied == 0 {
		t.Fatal("the large Put did not go through jobs.db")
	}
	if err := s.abandon(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := []string{"1.lab", "10.lab", "11.lab", "12.lab", "13.lab", "14.lab"}
	if got, want := dumpSpool(t, s, ids), memoryDump(t, steps, ids); got != want {
		t.Fatalf("spool holds\n%.2000s\nwant\n%.2000s", got, want)
	}
}

// TestWALReusesFile: after a checkpoint the log starts over in the same
// file, which does not grow past its limit.
func TestWALReusesFile(t *testing.T) {
	dir := t.TempDir()
	opts := Options{NoSync: true, limits: walLimits{entries: 1 << 20, bytes: 1 << 30, logSize: 64 << 10}}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2000 {
		if err := s.Put(ctx, walRecord(fmt.Sprintf("%d.lab", 1+i%50), i, time.Time{})); err != nil {
			t.Fatal(err)
		}
	}
	if s.applied == 0 {
		t.Fatal("no checkpoint after 2000 writes into a 64 KiB log")
	}
	if err := s.abandon(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, WALName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > walHeaderSize+walChunk {
		t.Fatalf("log file is %d bytes, want at most one chunk", fi.Size())
	}
	s, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		id := fmt.Sprintf("%d.lab", 1+i)
		r, err := s.Get(ctx, id)
		want := walRecord(id, 1950+i, time.Time{})
		if err != nil || !bytes.Equal(r.Data, want.Data) {
			t.Fatalf("Get(%s) = %q, %v; want %q", id, r.Data, err, want.Data)
		}
	}
}

func TestLastNonZero(t *testing.T) {
	at := func(n int, set ...int) []byte {
		b := make([]byte, n)
		for _, i := range set {
			b[i] = 1
		}
		return b
	}
	tests := []struct {
		name string
		buf  []byte
		want int
	}{
		{"empty", nil, -1},
		{"all zeros, several blocks", at(3*4096 + 5), -1},
		{"first byte", at(3*4096+5, 0), 0},
		{"last byte", at(3*4096+5, 3*4096+4), 3*4096 + 4},
		{"last byte of a block", at(3*4096+5, 4095), 4095},
		{"first byte of a block", at(3*4096, 2*4096), 2 * 4096},
		{"short", at(3, 1), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastNonZero(tc.buf); got != tc.want {
				t.Fatalf("lastNonZero = %d, want %d", got, tc.want)
			}
		})
	}
}
