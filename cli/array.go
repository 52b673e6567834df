package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sharq-hpc/sharq/jobid"
)

// ErrBadArray is wrapped by every -J or array id parsing error.
var ErrBadArray = jobid.ErrBadRange

// ParseArray parses qsub -J start-end[:step][%max] and returns
// api.Job.ArrayIndices and ArrayMax (0 without %max). Package jobid holds
// the rules.
func ParseArray(s string) (indices jobid.Range, maxRunning int, err error) {
	a, err := jobid.ParseArray(s)
	if err != nil {
		return jobid.Range{}, 0, err
	}
	return a.Range, a.Max, nil
}

// maxExpanded bounds how many ids one range argument may expand to.
const maxExpanded = jobid.MaxArraySize

// expandJobIDs expands subjob ranges of the ids users type to qdel and
// friends: 123[2-5] is 123[2] 123[3] 123[4] 123[5]; 123[1-9:2] and
// 123[1,4,7-8] work too. Other ids (123, 123.lab, 123[], 123[7].lab) pass
// through unchanged; the controller normalises the suffix and judges ids
// that do not parse.
func expandJobIDs(ids []string) ([]string, error) {
	var out []string
	for _, id := range ids {
		r, err := jobid.ParseRef(id)
		if err != nil {
			switch {
			case errors.Is(err, ErrBadArray):
				return nil, fmt.Errorf("%s: %w", id, err)
			case looksLikeSelection(id):
				return nil, fmt.Errorf("%w in %s: %w", ErrBadArray, id, err)
			}
			out = append(out, id)
			continue
		}
		more, err := r.Expand(maxExpanded - len(out))
		if err != nil {
			if errors.Is(err, jobid.ErrBadRange) {
				return nil, fmt.Errorf("in %s: %w", id, err)
			}
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// looksLikeSelection: NUM[...] with a range or list inside the brackets.
func looksLikeSelection(id string) bool {
	open := strings.IndexByte(id, '[')
	end := strings.IndexByte(id, ']')
	return open > 0 && end > open && strings.ContainsAny(id[open:end], ",-:")
}

// arraySpec is a parsed -J value.
type arraySpec struct {
	Indices jobid.Range // as api.Job.ArrayIndices
	Max     int         // %max, 0 for none
}
