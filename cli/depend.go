package cli

import (
	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

// ErrBadDepend is wrapped by every -W depend= parsing error.
var ErrBadDepend = jobid.ErrBadDepend

// ParseDepend parses a -W depend= value: type:id[:id...] entries separated
// by commas, type one of after, afterok, afternotok, afterany. Repeated
// pairs are dropped. Package jobid holds the rules.
func ParseDepend(s string) ([]api.Dep, error) {
	deps, err := jobid.ParseDepend(s)
	if err != nil {
		return nil, err
	}
	out := make([]api.Dep, len(deps))
	for i, d := range deps {
		out[i] = api.Dep{Type: d.Type, On: d.On}
	}
	return out, nil
}

// formatDepend writes deps back in PBS form (jobid.FormatDepend).
func formatDepend(deps []api.Dep) string {
	jd := make([]jobid.Dep, 0, len(deps))
	for _, d := range deps {
		jd = append(jd, jobid.Dep{Type: d.Type, On: d.On})
	}
	return jobid.FormatDepend(jd)
}
