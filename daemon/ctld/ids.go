package ctld

import (
	"fmt"
	"strconv"
	"strings"
)

// jobRef is a parsed job id: "12.lab", "12[].lab", "12[7].lab", or a range
// of subjobs "12[2-5].lab" (qdel). Users may leave out ".lab".
type jobRef struct {
	Seq      uint64
	Array    bool // has brackets
	Index    int  // subjob index, or -1 for the whole array "12[]"
	RangeEnd int  // last index of a range; equal to Index otherwise
}

// parseJobRef parses what a user typed; cluster is the cluster name, which
// a full id must carry.
func parseJobRef(s, cluster string) (jobRef, error) {
	r := jobRef{Index: -1, RangeEnd: -1}
	num := s
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if s[i+1:] != cluster {
			return r, fmt.Errorf("job id %q: cluster %q is not %q", s, s[i+1:], cluster)
		}
		num = s[:i]
	}
	if i := strings.IndexByte(num, '['); i >= 0 {
		if !strings.HasSuffix(num, "]") {
			return r, fmt.Errorf("job id %q: unbalanced brackets", s)
		}
		r.Array = true
		inner := num[i+1 : len(num)-1]
		num = num[:i]
		if inner != "" {
			lo, hi, isRange := strings.Cut(inner, "-")
			a, err := strconv.Atoi(lo)
			if err != nil || a < 0 {
				return r, fmt.Errorf("job id %q: bad array index %q", s, lo)
			}
			r.Index, r.RangeEnd = a, a
			if isRange {
				b, err := strconv.Atoi(hi)
				if err != nil || b < a {
					return r, fmt.Errorf("job id %q: bad array range %q", s, inner)
				}
				r.RangeEnd = b
			}
		}
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil || seq == 0 {
		return r, fmt.Errorf("job id %q: not a job number", s)
	}
	r.Seq = seq
	return r, nil
}

// ids expands the reference to full job ids.
func (r jobRef) ids(cluster string) []string {
	switch {
	case !r.Array:
		return []string{fmt.Sprintf("%d.%s", r.Seq, cluster)}
	case r.Index < 0:
		return []string{arrayID(r.Seq, cluster)}
	}
	out := make([]string, 0, r.RangeEnd-r.Index+1)
	for i := r.Index; i <= r.RangeEnd; i++ {
		out = append(out, subjobID(r.Seq, i, cluster))
	}
	return out
}

func jobID(seq uint64, cluster string) string   { return fmt.Sprintf("%d.%s", seq, cluster) }
func arrayID(seq uint64, cluster string) string { return fmt.Sprintf("%d[].%s", seq, cluster) }
func subjobID(seq uint64, i int, cluster string) string {
	return fmt.Sprintf("%d[%d].%s", seq, i, cluster)
}
