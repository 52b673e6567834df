package jobid

import (
	"fmt"
	"strings"
)

// Bounds of what a user may type.
const (
	// MaxRefLen bounds a typed job id in bytes.
	MaxRefLen = 1024
	// MaxRefParts bounds the comma-separated parts of a subjob selection.
	MaxRefParts = 64
)

// Ref is a job id as a user types it to qdel, qstat, qalter or a
// dependency: 12, 12.lab, 12[] (the array), 12[7] (one subjob) or a
// selection of subjobs 12[2-5], 12[1-9:2], 12[1,4,7-8].
type Ref struct {
	Seq    uint64
	Kind   Kind    // Plain, Array (12[]) or Sub (brackets with a selection)
	Sel    []Range // Kind Sub: the selected indices, as typed
	Server string  // "" when the user left it out
}

// ParseRef parses a typed id. Errors wrap ErrBadID.
func ParseRef(s string) (Ref, error) {
	var r Ref
	if s == "" {
		return r, bad(s, "empty")
	}
	if len(s) > MaxRefLen {
		return r, bad(s[:32]+"...", fmt.Sprintf("longer than %d bytes", MaxRefLen))
	}
	numStr, rest := leadingDigits(s)
	var err error
	if r.Seq, err = decimal(numStr); err != nil || r.Seq == 0 {
		return r, bad(s, "not a job number")
	}
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return r, bad(s, "unbalanced brackets")
		}
		inner := rest[1:end]
		rest = rest[end+1:]
		r.Kind = Array
		if inner != "" {
			r.Kind = Sub
			parts := strings.Split(inner, ",")
			if len(parts) > MaxRefParts {
				return r, bad(s, fmt.Sprintf("more than %d parts in the subjob list", MaxRefParts))
			}
			for _, p := range parts {
				rg, err := ParseRange(p)
				if err != nil {
					return r, fmt.Errorf("%w: %w", ErrBadID, err)
				}
				r.Sel = append(r.Sel, rg)
			}
		}
	}
	if r.Server, err = server(s, rest); err != nil {
		return r, err
	}
	if r.Server != "" && !validServer(r.Server) {
		return r, bad(s, "bad server name")
	}
	return r, nil
}

// validServer: [A-Za-z0-9][A-Za-z0-9._-]*.
func validServer(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return s != ""
}

// Single says whether r names one job: a plain job, an array, or exactly
// one subjob; i is that subjob's index.
func (r Ref) Single() (i int, ok bool) {
	switch {
	case r.Kind != Sub:
		return -1, true
	case len(r.Sel) == 1 && r.Sel[0].Lo == r.Sel[0].Hi:
		return r.Sel[0].Lo, true
	}
	return -1, false
}

// ID is the canonical id of a Single r on server.
func (r Ref) ID(server string) string {
	id := ID{Seq: r.Seq, Kind: r.Kind, Server: server}
	if i, ok := r.Single(); ok && r.Kind == Sub {
		id.Index = uint64(i)
	}
	return id.String()
}

// Each calls fn with the index of each selected subjob that array indices
// arr has, in selection order. It walks at most len(r.Sel)*arr.Len()
// indices, however wide the selection.
func (r Ref) Each(arr Range, fn func(int)) {
	for _, sel := range r.Sel {
		arr.eachIn(sel, fn)
	}
}

// Expand lists the ids r selects without knowing the array: what a command
// sends for 12[2-5]. It refuses more than limit ids. Ids keep the server as
// typed.
func (r Ref) Expand(limit int) ([]string, error) {
	if _, ok := r.Single(); ok {
		id := ID{Seq: r.Seq, Kind: r.Kind, Server: r.Server}
		if r.Kind == Sub {
			id.Index = uint64(r.Sel[0].Lo)
		}
		return []string{id.String()}, nil
	}
	n := 0
	for _, s := range r.Sel {
		n += s.Len()
	}
	if n > limit {
		return nil, fmt.Errorf("%w: %d subjobs selected, more than %d", ErrBadRange, n, limit)
	}
	out := make([]string, 0, n)
	for _, s := range r.Sel {
		for _, i := range s.Indices() {
			out = append(out, ID{Seq: r.Seq, Kind: Sub, Index: uint64(i), Server: r.Server}.String())
		}
	}
	return out, nil
}
