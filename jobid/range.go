package jobid

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Bounds of arrays.
const (
	// MaxIndex is the largest array index.
	MaxIndex = 1 << 24
	// MaxArraySize bounds the subjobs of one array.
	MaxArraySize = 100000
)

// ErrBadRange is wrapped by every array range error.
var ErrBadRange = errors.New("bad array range")

// Range is an inclusive range of array indices with a step: Lo, Lo+Step,
// ... up to Hi. A parsed Range has 0 <= Lo <= Hi <= MaxIndex and Step >= 1.
type Range struct {
	Lo, Hi, Step int
}

// ParseRange parses "7", "0-99" or "0-99:2" (an array's indices as the
// controller stores them, or one part of a subjob selection). The number of
// indices is not bounded here; see ParseIndices.
func ParseRange(s string) (Range, error) {
	rng, stepS, hasStep := strings.Cut(s, ":")
	loS, hiS, isRange := strings.Cut(rng, "-")
	r := Range{Step: 1}
	var err error
	if r.Lo, err = index(loS); err != nil {
		return r, fmt.Errorf("%w %q: start: %w", ErrBadRange, s, err)
	}
	r.Hi = r.Lo
	if isRange {
		if r.Hi, err = index(hiS); err != nil {
			return r, fmt.Errorf("%w %q: end: %w", ErrBadRange, s, err)
		}
	}
	if hasStep {
		if !isRange {
			return r, fmt.Errorf("%w %q: a step needs a range (a-b:step)", ErrBadRange, s)
		}
		if r.Step, err = index(stepS); err != nil || r.Step < 1 {
			return r, fmt.Errorf("%w %q: step must be at least 1", ErrBadRange, s)
		}
	}
	if r.Hi < r.Lo {
		return r, fmt.Errorf("%w %q: start is after end", ErrBadRange, s)
	}
	return r, nil
}

// ParseIndices parses an array's indices (ParseRange) and refuses more
// than MaxArraySize of them.
func ParseIndices(s string) (Range, error) {
	r, err := ParseRange(s)
	if err != nil {
		return r, err
	}
	if n := r.Len(); n > MaxArraySize {
		return r, fmt.Errorf("%w %q: %d subjobs, more than %d", ErrBadRange, s, n, MaxArraySize)
	}
	return r, nil
}

// ArraySpec is a qsub -J value: the indices and the %max of running subjobs.
type ArraySpec struct {
	Range
	Max int // 0: no limit
}

// ParseArray parses qsub -J START-END[:STEP][%MAX].
func ParseArray(s string) (ArraySpec, error) {
	var a ArraySpec
	rng, maxS, hasMax := strings.Cut(s, "%")
	if _, _, ok := strings.Cut(rng, "-"); !ok || !wellFormed(rng) || (hasMax && !allDigits(maxS)) {
		return a, fmt.Errorf("%w %q: want start-end[:step][%%max], e.g. 0-99 or 1-100:2%%10", ErrBadRange, s)
	}
	if err := tooLarge(rng); err != nil {
		return a, fmt.Errorf("%w %q: %w", ErrBadRange, s, err)
	}
	r, err := ParseIndices(rng)
	if err != nil {
		return a, err
	}
	a.Range = r
	if hasMax {
		m, err := index(maxS)
		if err != nil || m < 1 {
			return a, fmt.Errorf("%w %q: %%max must be at least 1", ErrBadRange, s)
		}
		a.Max = m
	}
	return a, nil
}

// wellFormed: digits, one '-', at most one ':' after it.
func wellFormed(s string) bool {
	rng, step, hasStep := strings.Cut(s, ":")
	a, b, _ := strings.Cut(rng, "-")
	return allDigits(a) && allDigits(b) && (!hasStep || allDigits(step))
}

func tooLarge(s string) error {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ':' }) {
		if v, err := strconv.ParseUint(f, 10, 64); err != nil || v > MaxIndex {
			return fmt.Errorf("index too large (at most %d)", MaxIndex)
		}
	}
	return nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Len is the number of indices in r.
func (r Range) Len() int {
	if r.Step < 1 || r.Hi < r.Lo {
		return 0
	}
	return (r.Hi-r.Lo)/r.Step + 1
}

// Contains says whether i is one of r's indices.
func (r Range) Contains(i int) bool {
	return r.Step >= 1 && i >= r.Lo && i <= r.Hi && (i-r.Lo)%r.Step == 0
}

// Indices lists r's indices in order.
func (r Range) Indices() []int {
	out := make([]int, 0, r.Len())
	for i := r.Lo; i <= r.Hi && r.Step >= 1; i += r.Step {
		out = append(out, i)
	}
	return out
}

// String prints r as ParseRange reads it: "7", "0-99", "0-99:2".
func (r Range) String() string {
	switch {
	case r.Lo == r.Hi && r.Step == 1:
		return strconv.Itoa(r.Lo)
	case r.Step == 1:
		return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
	}
	return fmt.Sprintf("%d-%d:%d", r.Lo, r.Hi, r.Step)
}

// IsZero says whether r is the zero Range, which no parse returns (its
// step is 0): an array field holding it means "not an array".
func (r Range) IsZero() bool { return r == Range{} }

// MarshalText writes an array's indices as qsub -J gives them and
// ParseIndices reads them: "start-end", with ":step" when the step is not
// 1. A range no parse gives (the zero Range included) is an error.
func (r Range) MarshalText() ([]byte, error) {
	if r.Step < 1 || r.Lo < 0 || r.Hi < r.Lo || r.Hi > MaxIndex || r.Len() > MaxArraySize {
		return nil, fmt.Errorf("%w: %d-%d:%d", ErrBadRange, r.Lo, r.Hi, r.Step)
	}
	if r.Step == 1 {
		return fmt.Appendf(nil, "%d-%d", r.Lo, r.Hi), nil
	}
	return fmt.Appendf(nil, "%d-%d:%d", r.Lo, r.Hi, r.Step), nil
}

// UnmarshalText reads an array's indices (ParseIndices: at most
// MaxArraySize of them): a message carrying others fails to decode.
func (r *Range) UnmarshalText(b []byte) error {
	v, err := ParseIndices(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Text is r as MarshalText writes it, "" for the zero Range (no array).
func (r Range) Text() string {
	b, err := r.MarshalText()
	if err != nil {
		return ""
	}
	return string(b)
}

// eachIn calls fn for r's indices that sel also has, in order. It walks at
// most r.Len() indices whatever sel is.
func (r Range) eachIn(sel Range, fn func(int)) {
	lo, hi := max(r.Lo, sel.Lo), min(r.Hi, sel.Hi)
	if lo > hi || r.Step < 1 || sel.Step < 1 {
		return
	}
	k := (lo - r.Lo + r.Step - 1) / r.Step
	for i := r.Lo + k*r.Step; i <= hi; i += r.Step {
		if (i-sel.Lo)%sel.Step == 0 {
			fn(i)
		}
	}
}
