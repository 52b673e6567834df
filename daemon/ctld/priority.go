package ctld

import (
	"fmt"

	"github.com/sharq-hpc/sharq/api"
)

// pbsPriority maps a PBS priority (qsub -p, qalter -p: api.MinPBSPriority
// to api.MaxPBSPriority, 0 meaning "as every other job") onto sharq's scale
// (0..maxPriority) around a share's priority_default: 0 is the default,
// -1024..-1 spread evenly below it down to 0, 1..1023 above it up to
// maxPriority. The map keeps order (a higher PBS priority never lands below
// a lower one), and ±1 always lands strictly above or below the default,
// unless the default is already at the end of the scale.
func pbsPriority(p, def int) (int, error) {
	if p < api.MinPBSPriority || p > api.MaxPBSPriority {
		return 0, fmt.Errorf("priority %d is outside PBS's %d..%d", p, api.MinPBSPriority, api.MaxPBSPriority)
	}
	switch {
	case p < 0:
		// floor(p*def/1024), so that -1 is below the default.
		n := p * def
		q := n / -api.MinPBSPriority
		if n%-api.MinPBSPriority != 0 {
			q--
		}
		return max(def+q, 0), nil
	case p > 0:
		// ceil(p*(max-def)/1023), so that 1 is above the default.
		room := maxPriority - def
		return min(def+(p*room+api.MaxPBSPriority-1)/api.MaxPBSPriority, maxPriority), nil
	}
	return def, nil
}
