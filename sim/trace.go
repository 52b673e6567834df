package sim

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// TraceJob is one row of a trace.
type TraceJob struct {
	Line     int           // 1-based line of the row in the file; orders jobs submitted at the same time
	Submit   time.Duration // submit_s, from the trace's time origin
	ID       string        // job
	Share    string        // share
	Priority int           // priority, 0..9999
	GPUs     int           // gpus, per node
	Nodes    int           // nodes (default 1)
	Duration time.Duration // duration_s: the work, excluding any lost to preemption
	// Grace is grace_s, the time a preempted job takes to exit; negative
	// (column absent or empty) means the partition's preempt_grace.
	Grace time.Duration
	// Checkpoint is checkpoint_s: the job saves its work every Checkpoint of
	// run time and loses the work since the last save when preempted. Zero
	// (absent or empty) means it saves on SIGTERM and loses nothing.
	Checkpoint time.Duration
	// Walltime is walltime_s, the run time the user asked for (qsub -l
	// walltime): the core plans reservations and backfill with it. Zero
	// (absent or empty) means none, and the core counts the partition's
	// default_walltime. When given it is at least Duration: a job that
	// would run past its walltime is killed by PBS, which the simulator
	// does not model.
	Walltime time.Duration
	// Group is the group column: a topology level all the job's nodes
	// must share a domain of (qsub -l place=group=LEVEL), required for at
	// most GroupWait when that is set (LEVEL@SECONDS); "" for none.
	Group     string
	GroupWait time.Duration
}

// TotalGPUs is the job's whole GPU request.
func (j *TraceJob) TotalGPUs() int { return j.Nodes * j.GPUs }

// Trace columns.
const (
	colSubmit     = "submit_s"
	colJob        = "job"
	colShare      = "share"
	colPriority   = "priority"
	colGPUs       = "gpus"
	colDuration   = "duration_s"
	colNodes      = "nodes"
	colGrace      = "grace_s"
	colCheckpoint = "checkpoint_s"
	colWalltime   = "walltime_s"
	colGroup      = "group"
)

var (
	requiredColumns = []string{colSubmit, colJob, colShare, colPriority, colGPUs, colDuration}
	optionalColumns = []string{colNodes, colGrace, colCheckpoint, colWalltime, colGroup}
)

// Limits on trace values.
const (
	MaxPriority    = 9999
	MaxGPUsPerNode = 4096
	MaxNodes       = 65536
	maxSeconds     = 1e9 // about 31 years; keeps nanoseconds inside int64
)

// LoadTrace reads a trace file (see DecodeTrace); errors name the file.
func LoadTrace(path string) ([]TraceJob, error) { return loadTable(path, "trace", DecodeTrace) }

// loadTable decodes the CSV table in the file at path with decode; a
// *TraceError gets the file's name, other errors name it in their text.
func loadTable[T any](path, what string, decode func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	rows, err := decode(f)
	var te *TraceError
	if errors.As(err, &te) {
		te.File = path
		return nil, te
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// OpenMaybeGzip returns a reader of r's content, gunzipping it when it
// starts with the gzip magic bytes.
func OpenMaybeGzip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// DecodeTrace reads a CSV trace with a header line, gzipped or not. The
// columns submit_s, job, share, priority, gpus and duration_s are required;
// nodes, grace_s, checkpoint_s and walltime_s are optional (an empty value means the
// default). Lines starting with '#' are comments. Every bad row is
// reported, up to MaxRowErrors, in a *TraceError. Jobs come back in file
// order.
func DecodeTrace(r io.Reader) ([]TraceJob, error) {
	var errs rowErrors
	cr, header, err := openTable(r, &errs)
	if err != nil {
		return nil, err
	}
	idx, ok := parseHeader(header, cr, requiredColumns, optionalColumns, &errs)
	if !ok {
		return nil, errs.err("")
	}
	ncols := len(header)

	var jobs []TraceJob
	seen := make(map[string]int)
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				// FieldsPerRecord < 0 never produces this; kept for safety.
				errs.add(pe.Line, "", ErrFieldCount)
				continue
			}
			// A syntax error leaves the reader's position uncertain: stop.
			errs.add(csvLine(err), "", fmt.Errorf("%w: %v", ErrSyntax, err))
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != ncols {
			errs.add(line, "", fmt.Errorf("%w: %d, header has %d", ErrFieldCount, len(rec), ncols))
			continue
		}
		j, ok := parseRow(rec, idx, line, &errs)
		if !ok {
			continue
		}
		if prev, dup := seen[j.ID]; dup {
			errs.add(line, colJob, fmt.Errorf("%w %q (first on line %d)", ErrDuplicateJob, j.ID, prev))
			continue
		}
		seen[j.ID] = line
		jobs = append(jobs, j)
	}
	if err := errs.err(""); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, ErrEmptyTrace
	}
	return jobs, nil
}

func csvLine(err error) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return 0
}

// columnIndex maps each known column to its field index, -1 when absent.
type columnIndex map[string]int

// openTable opens a CSV table of the simulator's (a trace or an actions
// file, gzipped or not; '#' starts a comment) and reads its header line.
func openTable(r io.Reader, errs *rowErrors) (*csv.Reader, []string, error) {
	in, err := OpenMaybeGzip(r)
	if err != nil {
		return nil, nil, err
	}
	cr := csv.NewReader(in)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("%w: no header line", ErrBadHeader)
	}
	if err != nil {
		errs.add(csvLine(err), "", fmt.Errorf("%w: %v", ErrSyntax, err))
		return nil, nil, errs.err("")
	}
	return cr, header, nil
}

// parseHeader indexes the header line cr has just read: every name must be
// one of required or optional, none twice, every required one present.
func parseHeader(header []string, cr *csv.Reader, required, optional []string, errs *rowErrors) (columnIndex, bool) {
	line, _ := cr.FieldPos(0)
	idx := make(columnIndex)
	for _, c := range required {
		idx[c] = -1
	}
	for _, c := range optional {
		idx[c] = -1
	}
	ok := true
	for i, name := range header {
		name = strings.TrimSpace(strings.TrimPrefix(name, "\uFEFF"))
		pos, known := idx[name]
		switch {
		case !known:
			errs.add(line, name, fmt.Errorf("%w: unknown column %q", ErrBadHeader, name))
			ok = false
		case pos >= 0:
			errs.add(line, name, fmt.Errorf("%w: column %q twice", ErrBadHeader, name))
			ok = false
		default:
			idx[name] = i
		}
	}
	for _, c := range required {
		if idx[c] < 0 {
			errs.add(line, c, ErrMissingColumn)
			ok = false
		}
	}
	return idx, ok
}

func parseRow(rec []string, idx columnIndex, line int, errs *rowErrors) (TraceJob, bool) {
	j := TraceJob{Line: line, Nodes: 1, Grace: -1}
	ok := true
	bad := func(col string, err error) {
		errs.add(line, col, err)
		ok = false
	}
	field := func(col string) string {
		if i := idx[col]; i >= 0 {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	name := func(col string) string {
		s := field(col)
		switch {
		case s == "":
			bad(col, ErrEmptyField)
		case !validName(s):
			bad(col, fmt.Errorf("%w: %q has control characters or invalid UTF-8", ErrOutOfRange, s))
		}
		return s
	}
	integer := func(col string, lo, hi int, def int, required bool) int {
		s := field(col)
		if s == "" {
			if required {
				bad(col, ErrEmptyField)
			}
			return def
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			bad(col, fmt.Errorf("%w: %q", ErrBadNumber, s))
			return def
		}
		if v < lo || v > hi {
			bad(col, fmt.Errorf("%w: %d not in %d..%d", ErrOutOfRange, v, lo, hi))
			return def
		}
		return v
	}
	seconds := func(col string, positive, required bool, def time.Duration) time.Duration {
		s := field(col)
		if s == "" {
			if required {
				bad(col, ErrEmptyField)
			}
			return def
		}
		d, err := parseSeconds(s)
		if err != nil {
			bad(col, err)
			return def
		}
		if positive && d <= 0 {
			bad(col, fmt.Errorf("%w: %s must be positive", ErrOutOfRange, s))
			return def
		}
		return d
	}
	j.Submit = seconds(colSubmit, false, true, 0)
	j.ID = name(colJob)
	j.Share = name(colShare)
	j.Priority = integer(colPriority, 0, MaxPriority, 0, true)
	j.GPUs = integer(colGPUs, 1, MaxGPUsPerNode, 1, true)
	j.Duration = seconds(colDuration, true, true, 0)
	j.Nodes = integer(colNodes, 1, MaxNodes, 1, false)
	j.Grace = seconds(colGrace, false, false, -1)
	j.Checkpoint = seconds(colCheckpoint, true, false, 0)
	j.Walltime = seconds(colWalltime, true, false, 0)
	if j.Walltime > 0 && j.Duration > 0 && j.Walltime < j.Duration {
		bad(colWalltime, fmt.Errorf("%w: %s is below duration_s %s (PBS would kill the job at its walltime; the simulator does not model that)",
			ErrOutOfRange, FormatSeconds(j.Walltime), FormatSeconds(j.Duration)))
		j.Walltime = 0
	}
	if s := field(colGroup); s != "" {
		g, w, err := parseGroup(s)
		if err != nil {
			bad(colGroup, err)
		}
		j.Group, j.GroupWait = g, w
	}
	return j, ok
}

func validName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// parseSeconds reads a non-negative number of seconds exactly (to the
// nanosecond) when written as plain decimals, or through ParseFloat (e.g.
// "1e3") otherwise.
func parseSeconds(s string) (time.Duration, error) {
	if d, ok := parseDecimalSeconds(s); ok {
		return d, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w: %q", ErrBadNumber, s)
	}
	if f < 0 || f > maxSeconds {
		return 0, fmt.Errorf("%w: %s not in 0..%g seconds", ErrOutOfRange, s, float64(maxSeconds))
	}
	return time.Duration(math.Round(f * 1e9)), nil
}

// parseDecimalSeconds parses DIGITS[.DIGITS] exactly, rounding below the
// nanosecond down; ok is false for anything else or for values out of range.
func parseDecimalSeconds(s string) (time.Duration, bool) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" && (!hasDot || frac == "") {
		return 0, false
	}
	if len(intPart) > 10 || !allDigits(intPart) || !allDigits(frac) {
		return 0, false
	}
	var sec int64
	for _, c := range intPart {
		sec = sec*10 + int64(c-'0')
	}
	if sec > maxSeconds {
		return 0, false
	}
	var ns int64
	for i := 0; i < 9; i++ {
		ns *= 10
		if i < len(frac) {
			ns += int64(frac[i] - '0')
		}
	}
	return time.Duration(sec*1e9 + ns), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatSeconds writes d as decimal seconds, exactly, without trailing zeros.
func FormatSeconds(d time.Duration) string {
	return string(appendSeconds(nil, d))
}

func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	ns := int64(d % time.Second)
	if ns == 0 {
		return b
	}
	var frac [9]byte
	for i := 8; i >= 0; i-- {
		frac[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 9
	for n > 0 && frac[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, frac[:n]...)
}

// EncodeTrace writes jobs as a CSV trace with every column; optional values
// equal to their default are left empty. DecodeTrace reads it back exactly
// (apart from Line).
func EncodeTrace(w io.Writer, jobs []TraceJob) error {
	cw := csv.NewWriter(w)
	header := append(append([]string{}, requiredColumns...), optionalColumns...)
	if err := cw.Write(header); err != nil {
		return err
	}
	rec := make([]string, len(header))
	for i := range jobs {
		j := &jobs[i]
		rec[0] = FormatSeconds(j.Submit)
		rec[1] = j.ID
		rec[2] = j.Share
		rec[3] = strconv.Itoa(j.Priority)
		rec[4] = strconv.Itoa(j.GPUs)
		rec[5] = FormatSeconds(j.Duration)
		rec[6] = ""
		if j.Nodes != 1 {
			rec[6] = strconv.Itoa(j.Nodes)
		}
		rec[7] = ""
		if j.Grace >= 0 {
			rec[7] = FormatSeconds(j.Grace)
		}
		rec[8] = ""
		if j.Checkpoint > 0 {
			rec[8] = FormatSeconds(j.Checkpoint)
		}
		rec[9] = ""
		if j.Walltime > 0 {
			rec[9] = FormatSeconds(j.Walltime)
		}
		rec[10] = formatGroup(j)
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("job %s: %w", j.ID, err)
		}
	}
	cw.Flush()
	return cw.Error()
}
