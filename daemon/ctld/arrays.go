package ctld

import (
	"fmt"
	"strconv"
	"strings"
)

// maxArraySize bounds one array job.
const maxArraySize = 100000

// parseArrayIndices parses PBS's -J "0-99", "0-99:2", or "7".
func parseArrayIndices(s string) ([]int, error) {
	rng, stepS, hasStep := strings.Cut(s, ":")
	step := 1
	if hasStep {
		v, err := strconv.Atoi(stepS)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("array %q: bad step %q", s, stepS)
		}
		step = v
	}
	loS, hiS, isRange := strings.Cut(rng, "-")
	lo, err := strconv.Atoi(loS)
	if err != nil || lo < 0 {
		return nil, fmt.Errorf("array %q: bad start %q", s, loS)
	}
	hi := lo
	if isRange {
		if hi, err = strconv.Atoi(hiS); err != nil || hi < lo {
			return nil, fmt.Errorf("array %q: bad end %q", s, hiS)
		}
	}
	if (hi-lo)/step+1 > maxArraySize {
		return nil, fmt.Errorf("array %q: more than %d subjobs", s, maxArraySize)
	}
	out := make([]int, 0, (hi-lo)/step+1)
	for i := lo; i <= hi; i += step {
		out = append(out, i)
	}
	return out, nil
}
