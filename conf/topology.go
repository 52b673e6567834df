package conf

import (
	"fmt"
	"strconv"
	"strings"
)

// Topology is a [[topology]] block with its [[domain]] blocks: the
// network as nested levels of domains (racks, leaf switches, NVLink
// blocks), which topology-aware placement keeps jobs inside.
type Topology struct {
	Name string
	// Levels are the level names, outermost first ("block", "rack");
	// nodes sit below the last.
	Levels  []string
	Domains []Domain // in file order, one entry per domain
}

// Domain is one domain of a topology level.
type Domain struct {
	Level string
	Name  string
	Nodes []string // expanded, in hostlist order
}

// Bounds of topologies.
const (
	MaxTopologyLevels = 8
	MaxDomains        = MaxNodes * MaxTopologyLevels
)

// Topology returns the named topology, or nil.
func (c *Config) Topology(name string) *Topology {
	for i := range c.Topologies {
		if c.Topologies[i].Name == name {
			return &c.Topologies[i]
		}
	}
	return nil
}

// PartitionTopology returns the topology partition's nodes sit in, or nil.
func (c *Config) PartitionTopology(partition string) *Topology {
	if p := c.Partition(partition); p != nil && p.Topology != "" {
		return c.Topology(p.Topology)
	}
	return nil
}

// DomainOf maps every node of t to its domain at level (nodes in none
// are left out).
func (t *Topology) DomainOf(level string) map[string]string {
	out := map[string]string{}
	for _, d := range t.Domains {
		if d.Level == level {
			for _, n := range d.Nodes {
				out[n] = d.Name
			}
		}
	}
	return out
}

// HasLevel says whether level is one of t's levels.
func (t *Topology) HasLevel(level string) bool {
	for _, l := range t.Levels {
		if l == level {
			return true
		}
	}
	return false
}

// topoBlock is a [[topology]] block while the file is checked.
type topoBlock struct {
	Topology
	t      *table
	levels map[string]int
	// in[level][node] is the domain holding node at level, and where.
	in []map[string]domainAt
}

type domainAt struct {
	name string
	t    *table
}

// topologies reads the [[topology]] and [[domain]] blocks, checking every
// domain's nodes against the declared ones (declared nil: the nodes could
// not be read, only the names are checked).
func (l *loader) topologies(tts, dts []*table, declared map[string]bool) []*topoBlock {
	var out []*topoBlock
	byName := map[string]*topoBlock{}
	for _, t := range tts {
		b := &topoBlock{t: t, levels: map[string]int{}}
		if name, ok := t.str("name"); ok {
			b.Name = name
			t.ctx = "topology " + quote(name)
			switch {
			case byName[name] != nil:
				t.errf("name", "defined twice (first at line %d)", byName[name].t.line("name"))
			case !validName(name):
				t.errf("name", "%q is not a valid name (want 1 to 63 of [A-Za-z0-9_.-], starting with a letter or digit)", name)
			default:
				byName[name] = b
			}
		} else if !t.has("name") {
			t.errAt("", "name is required")
		}
		if lv, ok := t.strings("levels"); ok {
			switch {
			case len(lv) == 0 || len(lv) > MaxTopologyLevels:
				t.errf("levels", "%d levels (want 1 to %d, outermost first, e.g. [\"block\", \"rack\"])", len(lv), MaxTopologyLevels)
			default:
				for i, x := range lv {
					if !validName(x) {
						t.errf("levels", "%q is not a valid level name", x)
					} else if _, dup := b.levels[x]; dup {
						t.errf("levels", "%q twice", x)
					}
					b.levels[x] = i
				}
				b.Levels = lv
			}
		} else if !t.has("levels") {
			t.errAt("", "levels is required (outermost first, e.g. [\"block\", \"rack\"])")
		}
		b.in = make([]map[string]domainAt, len(b.Levels))
		for i := range b.in {
			b.in[i] = map[string]domainAt{}
		}
		t.unknown(keys["topology"]...)
		out = append(out, b)
	}
	total := 0
	for _, t := range dts {
		var names []string
		if s, ok := t.str("name"); ok {
			if ns, err := ExpandHostlist(s); err != nil {
				t.errf("name", "%v", err)
			} else {
				names = ns
				for _, n := range ns {
					if !validName(n) {
						t.errf("name", "%q is not a valid name", n)
						names = nil
						break
					}
				}
			}
			t.ctx = "domain " + quote(s)
		} else if !t.has("name") {
			t.errAt("", "name is required (one name, or a hostlist such as \"rack[01-04]\" that splits nodes evenly)")
		}
		b := l.domainTopology(t, out, byName)
		level, lok := t.str("level")
		if !lok && !t.has("level") {
			t.errAt("", "level is required")
		}
		li, known := 0, false
		if b != nil && lok {
			if li, known = b.levels[level]; !known {
				t.errf("level", "%q is not a level of topology %q (levels: %s)", level, b.Name, strings.Join(b.Levels, ", "))
			}
		}
		var nodes []string
		nodesOK := false
		if s, ok := t.str("nodes"); ok {
			nodes, nodesOK = t.hostnames("nodes", s)
		} else if !t.has("nodes") {
			t.errAt("", "nodes is required (a hostlist such as \"gpu[01-08]\")")
		}
		t.unknown(keys["domain"]...)
		if b == nil || !known || names == nil || !nodesOK {
			continue
		}
		if declared != nil {
			var unknown []string
			for _, n := range nodes {
				if !declared[n] {
					unknown = append(unknown, n)
				}
			}
			if len(unknown) > 0 {
				t.errf("nodes", "%s not declared by any [[node]] block", CompressHostlist(unknown))
				continue
			}
		}
		if len(nodes)%len(names) != 0 {
			t.errf("name", "%d names for %d nodes: a hostlist name splits the nodes evenly", len(names), len(nodes))
			continue
		}
		per := len(nodes) / len(names)
		for i, name := range names {
			if total++; total > MaxDomains {
				t.errf("name", "more than %d domains", MaxDomains)
				return out
			}
			d := Domain{Level: level, Name: name, Nodes: nodes[i*per : (i+1)*per : (i+1)*per]}
			dup := false
			for _, o := range b.Domains {
				if o.Level == level && o.Name == name {
					t.errf("name", "%s %q defined twice", level, name)
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			var taken []string
			var first domainAt
			for _, n := range d.Nodes {
				if o, ok := b.in[li][n]; ok {
					if taken == nil {
						first = o
					}
					taken = append(taken, n)
					continue
				}
				b.in[li][n] = domainAt{name, t}
			}
			if len(taken) > 0 {
				t.errf("nodes", "%s already in %s %q (line %d): a node is in one domain of each level", CompressHostlist(taken), level, first.name, first.t.line("name"))
				continue
			}
			b.Domains = append(b.Domains, d)
		}
	}
	for _, b := range out {
		b.checkNesting()
	}
	return out
}

// domainTopology is the topology a [[domain]] block belongs to: its
// topology key, or the only topology.
func (l *loader) domainTopology(t *table, tops []*topoBlock, byName map[string]*topoBlock) *topoBlock {
	if name, ok := t.str("topology"); ok {
		b := byName[name]
		if b == nil {
			var names []string
			for _, o := range tops {
				names = append(names, o.Name)
			}
			t.errf("topology", "%q is not a [[topology]] (topologies: %s)", name, strings.Join(names, ", "))
		}
		return b
	}
	switch {
	case t.has("topology"):
		return nil // a wrong type, reported
	case len(tops) == 1:
		return tops[0]
	case len(tops) == 0:
		t.errAt("", "no [[topology]] block names its levels")
	default:
		t.errAt("", "topology is required (there are %d [[topology]] blocks)", len(tops))
	}
	return nil
}

// checkNesting reports the domains whose nodes are not all in one domain
// of each outer level (a level out of order, or a domain across two
// racks).
func (b *topoBlock) checkNesting() {
	for _, d := range b.Domains {
		li := b.levels[d.Level]
		dt := b.in[li][d.Nodes[0]].t
		for o := 0; o < li; o++ {
			outer := ""
			for k, n := range d.Nodes {
				od, ok := b.in[o][n]
				if !ok {
					dt.errf("nodes", "%s %q: %s is in no %s (levels nest, outermost first: %s)", d.Level, d.Name, n, b.Levels[o], strings.Join(b.Levels, " > "))
					return
				}
				if k > 0 && od.name != outer {
					dt.errf("nodes", "%s %q spans %s %q and %q (levels nest, outermost first: %s)", d.Level, d.Name, b.Levels[o], outer, od.name, strings.Join(b.Levels, " > "))
					return
				}
				outer = od.name
			}
		}
	}
}

// partitionTopologies checks each partition's topology keys against the
// topologies, and warns of a partition's nodes in no domain of a level.
func (l *loader) partitionTopologies(parts []*partBlock, tops []*topoBlock) {
	for _, p := range parts {
		if p.Topology == "" {
			if p.DefaultTopologyLevel != "" {
				p.t.errf("default_topology_level", "set, but the partition names no topology")
			}
			continue
		}
		var b *topoBlock
		var names []string
		for _, t := range tops {
			names = append(names, t.Name)
			if t.Name == p.Topology && b == nil {
				b = t
			}
		}
		if b == nil {
			p.t.errf("topology", "%q is not a [[topology]] (topologies: %s)", p.Topology, strings.Join(names, ", "))
			continue
		}
		if p.DefaultTopologyLevel != "" && !b.HasLevel(p.DefaultTopologyLevel) {
			p.t.errf("default_topology_level", "%q is not a level of topology %q (levels: %s)", p.DefaultTopologyLevel, b.Name, strings.Join(b.Levels, ", "))
		}
		for li, level := range b.Levels {
			var loose []string
			for _, n := range p.Nodes {
				if _, ok := b.in[li][n]; !ok {
					loose = append(loose, n)
				}
			}
			if len(loose) > 0 {
				p.t.warnf("topology", "%s in no %s of %q: jobs that require a %s never use them", CompressHostlist(loose), level, b.Name, level)
			}
		}
	}
}

// String gives a domain as "level name".
func (d Domain) String() string { return fmt.Sprintf("%s %s", d.Level, d.Name) }

// nvlinkGroups reads a node block's nvlink key: groups of GPU indices
// ("0-3", "0,2,4") that NVLink joins, each GPU in one group at most, every
// index below gpus.
func (t *table) nvlinkGroups(key string, gpus int) [][]int {
	groups, ok := t.strings(key)
	if !ok {
		return nil
	}
	var out [][]int
	in := map[int]int{}
	for gi, g := range groups {
		var idx []int
		for _, part := range strings.Split(g, ",") {
			lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
			a, errA := strconv.Atoi(lo)
			b := a
			var errB error
			if isRange {
				b, errB = strconv.Atoi(hi)
			}
			if errA != nil || errB != nil || a < 0 || b < a || b >= MaxNodeGPUs {
				t.errf(key, "%q: want GPU indices such as \"0-3\" or \"0,2\"", g)
				return nil
			}
			for i := a; i <= b; i++ {
				idx = append(idx, i)
			}
		}
		for _, i := range idx {
			switch o, dup := in[i]; {
			case i >= gpus:
				t.errf(key, "%q: GPU %d, but the node has %d GPUs", g, i, gpus)
				return nil
			case dup:
				t.errf(key, "GPU %d in %q and %q (a GPU is in one group)", i, groups[o], g)
				return nil
			}
			in[i] = gi
		}
		if len(idx) < 2 {
			t.errf(key, "%q: a group joins at least 2 GPUs", g)
			return nil
		}
		out = append(out, idx)
	}
	return out
}
