package conf

import (
	"fmt"
	"slices"
	"sort"
)

// MaxLabels bounds a node's labels.
const MaxLabels = 32

// ReservedLabels are resource names a label may not take: jobs ask for
// these by name (-l select=1:ngpus=4:...), so a label of the same name could
// not be selected.
var ReservedLabels = []string{"host", "mem", "mpiprocs", "ncpus", "ngpus", "gpus", "nodect", "nodes",
	"ompthreads", "place", "ppn", "select", "vnode", "walltime", "wd"}

// ValidLabelKey says whether s can name a node label: 1 to 63 of
// [a-z0-9_], starting with a letter, and not a resource name.
func ValidLabelKey(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z' && validWord(s, 63, "_", true) && !slices.Contains(ReservedLabels, s)
}

// ValidLabelValue says whether s can be a label's value: 1 to 63 of
// [A-Za-z0-9_.-], starting with a letter or digit.
func ValidLabelValue(s string) bool { return validWord(s, 63, "_.-", false) }

// labels reads a [[node]] block's labels, an inline table of strings:
// labels = { gpu_type = "a100", ib = "hdr" }.
func (t *table) labels(key string) map[string]string {
	v, ok := t.get(key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.wrongType(key, `a table of strings such as { gpu_type = "a100" }`, v)
		return nil
	}
	if len(m) > MaxLabels {
		t.errf(key, "%d labels; at most %d", len(m), MaxLabels)
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]string, len(m))
	for _, k := range keys {
		s, isStr := m[k].(string)
		switch {
		case !ValidLabelKey(k):
			t.errf(key, "%q is not a label name (want 1 to 63 of [a-z0-9_], starting with a letter, and none of %v)", k, ReservedLabels)
		case !isStr:
			t.errf(key, "%s: want a string, got %s", k, describe(m[k]))
		case !ValidLabelValue(s):
			t.errf(key, "%s = %q: want 1 to 63 of [A-Za-z0-9_.-], starting with a letter or digit", k, s)
		default:
			out[k] = s
		}
	}
	return out
}

// PartitionLabels lists, per label name, the values the nodes of partition
// part carry, sorted.
func (c *Config) PartitionLabels(part string) map[string][]string {
	out := map[string][]string{}
	for _, n := range c.Nodes {
		if n.Partition != part {
			continue
		}
		for k, v := range n.Labels {
			if !slices.Contains(out[k], v) {
				out[k] = append(out[k], v)
			}
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// FormatLabels writes labels as k=v,k=v, sorted.
func FormatLabels(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%s=%s", k, l[k])
	}
	return s
}
