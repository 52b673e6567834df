package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ErrBadArray is wrapped by every -J or array id parsing error.
var ErrBadArray = errors.New("bad array range")

var arrayPattern = regexp.MustCompile(`^([0-9]+)-([0-9]+)(?::([0-9]+))?(?:%([0-9]+))?$`)

// arraySpec is a parsed -J value.
type arraySpec struct {
	Indices string // "0-99" or "0-99:2", as api.Job.ArrayIndices
	Max     int    // %max, 0 for none
}

// ParseArray parses qsub -J start-end[:step][%max] and returns
// api.Job.ArrayIndices ("start-end", with ":step" when the step is not 1)
// and ArrayMax (0 without %max).
func ParseArray(s string) (indices string, maxRunning int, err error) {
	m := arrayPattern.FindStringSubmatch(s)
	if m == nil {
		return "", 0, fmt.Errorf("%w %q: want start-end[:step][%%max], e.g. 0-99 or 1-100:2%%10", ErrBadArray, s)
	}
	start, err1 := strconv.Atoi(m[1])
	end, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || start > 1<<24 || end > 1<<24 {
		return "", 0, fmt.Errorf("%w %q: index too large", ErrBadArray, s)
	}
	if start > end {
		return "", 0, fmt.Errorf("%w %q: start is after end", ErrBadArray, s)
	}
	step := 1
	if m[3] != "" {
		step, err = strconv.Atoi(m[3])
		if err != nil || step < 1 || step > 1<<24 {
			return "", 0, fmt.Errorf("%w %q: step must be at least 1", ErrBadArray, s)
		}
	}
	if m[4] != "" {
		maxRunning, err = strconv.Atoi(m[4])
		if err != nil || maxRunning < 1 || maxRunning > 1<<24 {
			return "", 0, fmt.Errorf("%w %q: %%max must be at least 1", ErrBadArray, s)
		}
	}
	indices = fmt.Sprintf("%d-%d", start, end)
	if step != 1 {
		indices += fmt.Sprintf(":%d", step)
	}
	return indices, maxRunning, nil
}

// maxExpanded bounds how many ids one range argument may expand to.
const maxExpanded = 100000

var subjobRange = regexp.MustCompile(`^([0-9]+)\[([0-9,:-]+)\](\.[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

// expandJobIDs expands subjob ranges of the ids users type to qdel and
// friends: 123[2-5] is 123[2] 123[3] 123[4] 123[5]; 123[1-9:2] and
// 123[1,4,7-8] work too. Other ids (123, 123.lab, 123[], 123[7].lab) pass
// through unchanged; the controller normalises the suffix.
func expandJobIDs(ids []string) ([]string, error) {
	var out []string
	for _, id := range ids {
		m := subjobRange.FindStringSubmatch(id)
		if m == nil || !strings.ContainsAny(m[2], ",-:") {
			out = append(out, id)
			continue
		}
		for _, part := range strings.Split(m[2], ",") {
			lo, hi, step, err := parseIndexRange(part)
			if err != nil {
				return nil, fmt.Errorf("%w in %s: %w", ErrBadArray, id, err)
			}
			for i := lo; i <= hi; i += step {
				if len(out) >= maxExpanded {
					return nil, fmt.Errorf("%w in %s: more than %d ids", ErrBadArray, id, maxExpanded)
				}
				out = append(out, fmt.Sprintf("%s[%d]%s", m[1], i, m[3]))
			}
		}
	}
	return out, nil
}

// parseIndexRange parses "7", "2-5" or "1-9:2".
func parseIndexRange(s string) (lo, hi, step int, err error) {
	rng, st, hasStep := strings.Cut(s, ":")
	a, b, isRange := strings.Cut(rng, "-")
	if !allDigits(a) || (isRange && !allDigits(b)) || (hasStep && (!isRange || !allDigits(st))) || len(a) > 8 || len(b) > 8 || len(st) > 8 {
		return 0, 0, 0, fmt.Errorf("%q is not an index, a-b or a-b:step", s)
	}
	lo, _ = strconv.Atoi(a)
	hi, step = lo, 1
	if isRange {
		hi, _ = strconv.Atoi(b)
	}
	if hasStep {
		step, _ = strconv.Atoi(st)
	}
	if hi < lo || step < 1 {
		return 0, 0, 0, fmt.Errorf("%q is an empty range", s)
	}
	return lo, hi, step, nil
}
