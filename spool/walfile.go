package spool

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"

	"github.com/sharq-hpc/sharq/internal/atomicfile"
)

// WALName is the write-ahead log inside the spool directory.
const WALName = "jobs.wal"

// walChunk is how much the log file grows by at a time: it is filled with
// zeros ahead of the frames, so that the fdatasync of an ordinary write
// overwrites allocated blocks and has no file size change to journal.
const walChunk = 1 << 20

// walFile is the open log: where the next frame goes and what LSN it gets.
// Its methods are called with Bolt.wmu held.
type walFile struct {
	f      *os.File
	path   string
	salt   []byte
	pos    int64  // offset of the next frame
	alloc  int64  // file size: zeros or old frames from pos to here
	lsn    uint64 // LSN of the last frame written or replayed
	noSync bool
}

// createWAL makes a new empty log at path (via a temporary file and a
// rename, so that a crash leaves either no log or a whole header).
func createWAL(path string, noSync bool) error {
	salt := make([]byte, walSaltSize)
	if _, err := rand.Read(salt); err != nil {
		return err
	}
	buf := make([]byte, walHeaderSize+walChunk)
	copy(buf, encodeHeader(salt))
	return atomicfile.Write(path, buf, !noSync)
}

// openWAL opens the log at path, creating it if there is none, and returns
// it with its whole content.
func openWAL(path string, noSync bool) (*walFile, []byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		if err := createWAL(path, noSync); err != nil {
			return nil, nil, fmt.Errorf("create %s: %w", path, err)
		}
		f, err = os.OpenFile(path, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, nil, err
	}
	var buf []byte
	fi, err := f.Stat()
	if err == nil {
		buf = make([]byte, fi.Size())
		_, err = io.ReadFull(f, buf)
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	salt, err := decodeHeader(buf)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	w := &walFile{f: f, path: path, salt: salt, pos: walHeaderSize, alloc: int64(len(buf)), noSync: noSync}
	return w, buf, nil
}

// readLog returns the ops of buf (a whole log file) that jobs.db has not
// applied (LSN above applied), in order. The log ends at the first frame
// that is not the next one: zeros, a frame of an earlier round, or a torn
// last write (logged and dropped). If a frame of this round follows that
// end, the log is damaged in the middle: an error wrapping ErrCorrupt that
// names the offset.
func readLog(path string, buf, salt []byte, applied uint64, log *slog.Logger) ([]walOp, error) {
	var ops []walOp
	off := walHeaderSize
	expect := applied + 1
	for {
		lsn, body, n, err := frameAt(salt, buf[off:])
		if err != nil {
			if lsn == expect && lsn != 0 {
				// A sound header for the next entry but not its body: the
				// last write was cut short by the crash; it was never
				// acknowledged.
				log.Warn("spool: dropping the torn last entry of the write-ahead log", "file", path, "offset", off, "entry", lsn, "err", err)
			}
			break
		}
		if lsn < expect {
			// An earlier round's frame: the end (at the start of the file:
			// nothing was logged since the last checkpoint).
			break
		}
		if lsn > expect {
			return nil, fmt.Errorf("spool: %s: offset %d: log entry %d where %d was due: %w", path, off, lsn, expect, ErrCorrupt)
		}
		op, err := decodeBody(lsn, body)
		if err != nil {
			return nil, fmt.Errorf("spool: %s: offset %d: %w", path, off, err)
		}
		ops = append(ops, op)
		expect++
		off += n
	}
	if p, lsn, ok := laterFrame(buf, off+1, salt, expect); ok {
		return nil, fmt.Errorf("spool: %s: offset %d: damaged log entry %d, followed by entry %d at offset %d: %w", path, off, expect, lsn, p, ErrCorrupt)
	}
	return ops, nil
}

// laterFrame looks for a whole frame with an LSN of at least min anywhere
// in buf from offset from on. Each candidate offset costs a few compares;
// only a plausible length and LSN cost a header check (a short CRC), and
// only a header that passes its salted check costs a body check.
func laterFrame(buf []byte, from int, salt []byte, min uint64) (int, uint64, bool) {
	if from < walHeaderSize {
		from = walHeaderSize
	}
	saltSum := crc32.Checksum(salt, castagnoli)
	maxLSN := min + uint64(len(buf)/frameHead)
	// A frame starts with a length that is not zero, so none starts past
	// the last byte that is not zero: the zeros ahead of the log are not
	// searched.
	end := lastNonZero(buf) + 1
	for p := from; p < end && p+frameHead <= len(buf); p++ {
		l := binary.LittleEndian.Uint32(buf[p:])
		if l < walMinBody || l > walMaxBody || p+frameHead+int(l) > len(buf) {
			continue
		}
		h := buf[p : p+frameHead]
		lsn := binary.LittleEndian.Uint64(h[4:12])
		if lsn < min || lsn > maxLSN {
			continue
		}
		hc := crc32.Update(saltSum, castagnoli, h[0:12])
		if hc != binary.LittleEndian.Uint32(h[12:16]) {
			continue
		}
		if crc32.Update(hc, castagnoli, buf[p+frameHead:p+frameHead+int(l)]) == binary.LittleEndian.Uint32(h[16:20]) {
			return p, lsn, true
		}
	}
	return 0, 0, false
}

var zeroBlock [4096]byte

// lastNonZero returns the offset of the last byte of buf that is not
// zero, or -1; whole blocks of zeros are skipped with one compare each.
func lastNonZero(buf []byte) int {
	end := len(buf)
	for end >= len(zeroBlock) && bytes.Equal(buf[end-len(zeroBlock):end], zeroBlock[:]) {
		end -= len(zeroBlock)
	}
	for end > 0 && buf[end-1] == 0 {
		end--
	}
	return end - 1
}

// fits reports whether a frame of n bytes fits below max without a
// checkpoint.
func (w *walFile) fits(n int, max int64) bool {
	return w.pos+int64(n) <= max || w.pos == walHeaderSize
}

// append writes body as the next frame and syncs it. A failed write or
// sync leaves the log in an unknown state: the caller stops using it.
func (w *walFile) append(body []byte) error {
	lsn := w.lsn + 1
	f := encodeFrame(w.salt, lsn, body)
	end := w.pos + int64(len(f))
	if end > w.alloc {
		if err := w.grow(end); err != nil {
			return err
		}
	}
	if _, err := w.f.WriteAt(f, w.pos); err != nil {
		return fmt.Errorf("spool: write %s: %w", w.path, err)
	}
	if !w.noSync {
		if err := fdatasync(w.f); err != nil {
			return fmt.Errorf("spool: sync %s: %w", w.path, err)
		}
	}
	w.pos, w.lsn = end, lsn
	return nil
}

// grow fills the file with zeros up to past end, a chunk at a time.
func (w *walFile) grow(end int64) error {
	size := (end + walChunk - 1) / walChunk * walChunk
	zeros := make([]byte, min(size-w.alloc, walChunk))
	for off := w.alloc; off < size; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), size-off)
		if _, err := w.f.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("spool: grow %s: %w", w.path, err)
		}
	}
	w.alloc = size
	return nil
}

// reset starts the log over after a checkpoint: the next frame goes right
// after the header. Nothing is written: the frames left behind carry LSNs
// that jobs.db now records as applied.
func (w *walFile) reset() { w.pos = walHeaderSize }

func (w *walFile) close() error { return w.f.Close() }
