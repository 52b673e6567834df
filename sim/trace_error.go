package sim

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors carried by RowError, for errors.Is.
var (
	ErrMissingColumn = errors.New("missing required column")
	ErrBadHeader     = errors.New("bad header")
	ErrBadNumber     = errors.New("bad number")
	ErrOutOfRange    = errors.New("value out of range")
	ErrEmptyField    = errors.New("empty field")
	ErrFieldCount    = errors.New("wrong number of fields")
	ErrDuplicateJob  = errors.New("duplicate job id")
	ErrUnknownShare  = errors.New("unknown share")
	ErrSyntax        = errors.New("CSV syntax error")
	ErrEmptyTrace    = errors.New("trace has no jobs")
)

// MaxRowErrors caps how many bad rows a TraceError lists.
const MaxRowErrors = 50

// RowError is one mistake in a trace: its 1-based line, the column when
// known, and a sentinel (see above) wrapped with details.
type RowError struct {
	Line   int
	Column string
	Err    error
}

func (e RowError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("line %d: %s: %v", e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e RowError) Unwrap() error { return e.Err }

// TraceError lists the bad rows of a trace (at most MaxRowErrors of them;
// Omitted counts the rest). errors.Is finds the sentinels of its rows.
type TraceError struct {
	File    string
	Rows    []RowError
	Omitted int
}

func (e *TraceError) Error() string {
	var b strings.Builder
	name := e.File
	if name == "" {
		name = "trace"
	}
	fmt.Fprintf(&b, "%s: %d bad row(s)", name, len(e.Rows)+e.Omitted)
	for _, r := range e.Rows {
		b.WriteString("\n  ")
		b.WriteString(r.Error())
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", e.Omitted)
	}
	return b.String()
}

func (e *TraceError) Unwrap() []error {
	errs := make([]error, len(e.Rows))
	for i, r := range e.Rows {
		errs[i] = r
	}
	return errs
}

// rowErrors collects row errors up to the cap.
type rowErrors struct {
	rows    []RowError
	omitted int
}

func (c *rowErrors) add(line int, col string, err error) {
	if len(c.rows) >= MaxRowErrors {
		c.omitted++
		return
	}
	c.rows = append(c.rows, RowError{Line: line, Column: col, Err: err})
}

func (c *rowErrors) err(file string) error {
	if len(c.rows) == 0 {
		return nil
	}
	return &TraceError{File: file, Rows: c.rows, Omitted: c.omitted}
}
