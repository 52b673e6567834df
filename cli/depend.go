package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"sharq/api"
)

// ErrBadDepend is wrapped by every -W depend= parsing error.
var ErrBadDepend = errors.New("bad dependency")

// depTypes are the dependency types sharq knows (PBS's after* family).
var depTypes = map[string]bool{"after": true, "afterok": true, "afternotok": true, "afterany": true}

// jobIDPattern matches a job id as users type it: 123, 123.lab, 123[],
// 123[7].lab.
var jobIDPattern = regexp.MustCompile(`^[0-9]+(\[[0-9]*\])?(\.[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

// ParseDepend parses a -W depend= value: type:id[:id...] entries separated
// by commas, type one of after, afterok, afternotok, afterany. Repeated
// pairs are dropped.
func ParseDepend(s string) ([]api.Dep, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: empty; want e.g. afterok:123", ErrBadDepend)
	}
	var deps []api.Dep
	seen := map[api.Dep]bool{}
	for _, entry := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(entry), ":")
		typ := strings.ToLower(parts[0])
		if !depTypes[typ] {
			if strings.HasPrefix(typ, "before") || typ == "on" || typ == "runone" {
				return nil, fmt.Errorf("%w %q: type %s is not supported (use after, afterok, afternotok or afterany)", ErrBadDepend, entry, typ)
			}
			return nil, fmt.Errorf("%w %q: unknown type %q (want after, afterok, afternotok or afterany)", ErrBadDepend, entry, parts[0])
		}
		if len(parts) < 2 {
			return nil, fmt.Errorf("%w %q: %s names no job (want %s:ID[:ID...])", ErrBadDepend, entry, typ, typ)
		}
		for _, id := range parts[1:] {
			if !jobIDPattern.MatchString(id) {
				return nil, fmt.Errorf("%w %q: %q is not a job id", ErrBadDepend, entry, id)
			}
			d := api.Dep{Type: typ, On: id}
			if !seen[d] {
				seen[d] = true
				deps = append(deps, d)
			}
		}
	}
	return deps, nil
}

// formatDepend writes deps back in PBS form, consecutive entries of one type
// grouped: afterok:1.lab:2.lab,afterany:3.lab.
func formatDepend(deps []api.Dep) string {
	var b strings.Builder
	for i, d := range deps {
		switch {
		case i > 0 && deps[i-1].Type == d.Type:
			b.WriteString(":")
		case i > 0:
			b.WriteString("," + d.Type + ":")
		default:
			b.WriteString(d.Type + ":")
		}
		b.WriteString(d.On)
	}
	return b.String()
}
