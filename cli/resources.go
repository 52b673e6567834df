package cli

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// ErrBadResource is wrapped by every -l parsing error.
var ErrBadResource = errors.New("bad resource")

// resSpec is what one or more -l options asked for; nil fields were not
// given, so a later source (the command line over #PBS directives) overrides
// field by field.
type resSpec struct {
	Nodes      *int
	GPUs       *int // per node
	CPUs       *int // per node
	Mem        *int64
	Walltime   *time.Duration
	MPIProcs   *int // per node
	OMPThreads *int
	Pack       *bool             // place=pack: every chunk on one node
	Excl       *bool             // place=excl: the job's nodes run nothing else
	Group      *groupSpec        // place=group=LEVEL: a topology domain
	Labels     map[string]string // node labels (gpu_type=a100), by key
}

// overlay sets every field o has.
func (r *resSpec) overlay(o resSpec) {
	if o.Nodes != nil {
		r.Nodes = o.Nodes
	}
	if o.GPUs != nil {
		r.GPUs = o.GPUs
	}
	if o.CPUs != nil {
		r.CPUs = o.CPUs
	}
	if o.Mem != nil {
		r.Mem = o.Mem
	}
	if o.Walltime != nil {
		r.Walltime = o.Walltime
	}
	if o.MPIProcs != nil {
		r.MPIProcs = o.MPIProcs
	}
	if o.OMPThreads != nil {
		r.OMPThreads = o.OMPThreads
	}
	if o.Pack != nil {
		r.Pack = o.Pack
	}
	if o.Excl != nil {
		r.Excl = o.Excl
	}
	if o.Group != nil {
		r.Group = o.Group
	}
	for k, v := range o.Labels {
		r.setLabel(k, v)
	}
}

func (r *resSpec) setLabel(k, v string) {
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	r.Labels[k] = v
}

// resources is the api form: one node unless asked otherwise.
func (r resSpec) resources() api.Resources {
	out := api.Resources{Nodes: 1}
	if r.Nodes != nil {
		out.Nodes = *r.Nodes
	}
	if r.GPUs != nil {
		out.GPUsPerNode = *r.GPUs
	}
	if r.CPUs != nil {
		out.CPUsPerNode = *r.CPUs
	}
	if r.Mem != nil {
		out.MemPerNode = *r.Mem
	}
	if r.Walltime != nil {
		out.Walltime = *r.Walltime
	}
	if r.MPIProcs != nil {
		out.MPIProcs = *r.MPIProcs
	}
	if r.OMPThreads != nil {
		out.OMPThreads = *r.OMPThreads
	}
	if len(r.Labels) > 0 {
		out.Labels = maps.Clone(r.Labels)
	}
	out.Exclusive = r.Excl != nil && *r.Excl
	if g := r.Group; g != nil {
		out.Group, out.GroupPreferred, out.GroupWait = g.Level, g.Preferred, g.Wait
	}
	if r.Pack != nil && *r.Pack && out.Nodes > 1 {
		// place=pack: the chunks share one node, which holds their sum.
		n := out.Nodes
		out.Nodes = 1
		out.GPUsPerNode *= n
		out.CPUsPerNode *= n
		out.MemPerNode *= int64(n)
		out.MPIProcs = max(out.MPIProcs, 1) * n
	}
	return out
}

const knownResources = "ngpus, ncpus, mem, walltime, select, nodes, mpiprocs, ompthreads, place, and node labels such as gpu_type"

// parseResourceList parses one -l value into r, later items overriding
// earlier ones. Items are comma-separated key=value: ngpus (or gpus), ncpus,
// mem, walltime, select=N:ngpus=G:ncpus=C:mem=M (N nodes, the rest per node)
// and Torque's nodes=N:gpus=G:ppn=C. GPUs, CPUs and memory are per node.
func parseResourceList(s string, r *resSpec) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%w: empty -l value (want e.g. ngpus=4,walltime=12:00:00)", ErrBadResource)
	}
	for _, item := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(item, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		if !ok && key == "wd" {
			continue // Torque's -l wd: jobs start in $PBS_O_WORKDIR anyway
		}
		if !ok || key == "" {
			return fmt.Errorf("%w %q: want key=value (known: %s)", ErrBadResource, item, knownResources)
		}
		if val == "" {
			return fmt.Errorf("%w %q: %s has no value", ErrBadResource, item, key)
		}
		switch key {
		case "select":
			if err := parseChunk(val, "select", r); err != nil {
				return err
			}
		case "nodes", "nodect":
			if err := parseChunk(val, key, r); err != nil {
				return err
			}
		case "place":
			if err := parsePlace(val, r); err != nil {
				return err
			}
		case "walltime":
			d, err := conf.ParseDuration(val)
			if err != nil {
				return fmt.Errorf("%w: walltime: %w", ErrBadResource, err)
			}
			if d == 0 {
				return fmt.Errorf("%w: walltime must be above zero", ErrBadResource)
			}
			r.Walltime = &d
		default:
			if err := setChunkResource(key, val, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseChunk parses a select= or nodes= value: an optional node count, then
// colon-separated per-node resources. Several chunk types joined with "+" and
// Torque node names are refused: every node of a job gets the same share.
func parseChunk(val, key string, r *resSpec) error {
	if strings.Contains(val, "+") {
		return fmt.Errorf("%w %s=%s: chunks of different shapes (+) are not supported; every node of a job gets the same resources", ErrBadResource, key, val)
	}
	parts := strings.Split(val, ":")
	start := 0
	if !strings.Contains(parts[0], "=") {
		n, err := strconv.Atoi(parts[0])
		if err != nil || parts[0][0] == '+' || parts[0][0] == '-' {
			if key == "nodes" {
				return fmt.Errorf("%w nodes=%s: want a node count (node names are not supported)", ErrBadResource, val)
			}
			return fmt.Errorf("%w %s=%s: want a node count, e.g. %s=2:ngpus=8", ErrBadResource, key, val, key)
		}
		if n < 1 {
			return fmt.Errorf("%w %s=%s: node count must be at least 1", ErrBadResource, key, val)
		}
		r.Nodes = &n
		start = 1
	} else if key == "nodect" {
		return fmt.Errorf("%w nodect=%s: want a node count", ErrBadResource, val)
	} else {
		one := 1
		r.Nodes = &one
	}
	if key == "nodect" && len(parts) > 1 {
		return fmt.Errorf("%w nodect=%s: want a node count", ErrBadResource, val)
	}
	for _, p := range parts[start:] {
		k, v, ok := strings.Cut(p, "=")
		k = strings.ToLower(k)
		if !ok || k == "" || v == "" {
			return fmt.Errorf("%w %s=%s: %q is not res=value", ErrBadResource, key, val, p)
		}
		if k == "walltime" || k == "select" || k == "nodes" || k == "place" {
			return fmt.Errorf("%w %s=%s: %s is not a per-node resource", ErrBadResource, key, val, k)
		}
		if err := setChunkResource(k, v, r); err != nil {
			return err
		}
	}
	return nil
}

// setChunkResource sets one per-node resource.
func setChunkResource(key, val string, r *resSpec) error {
	switch key {
	case "ngpus", "gpus":
		n, err := parseCount(key, val)
		if err != nil {
			return err
		}
		r.GPUs = &n
	case "ncpus", "ppn":
		n, err := parseCount(key, val)
		if err != nil {
			return err
		}
		r.CPUs = &n
	case "mem":
		m, err := conf.ParseSize(val)
		if err != nil {
			return fmt.Errorf("%w: mem: %w", ErrBadResource, err)
		}
		r.Mem = &m
	case "mpiprocs", "ompthreads":
		n, err := parseCount(key, val)
		if err != nil {
			return err
		}
		if n < 1 || n > 4096 {
			return fmt.Errorf("%w %s=%s: want 1 to 4096", ErrBadResource, key, val)
		}
		if key == "mpiprocs" {
			r.MPIProcs = &n
		} else {
			r.OMPThreads = &n
		}
	default:
		// A site resource: a node label the controller checks against
		// the partition's nodes ([[node]] labels).
		if !conf.ValidLabelKey(key) || !conf.ValidLabelValue(val) {
			return fmt.Errorf("%w %q: unknown resource (known: %s)", ErrBadResource, key, knownResources)
		}
		r.setLabel(key, val)
	}
	return nil
}

// parsePlace reads PBS's place=[arrangement][:sharing][:grouping], at most
// one of each. Arrangement: free, scatter and vscatter put every chunk on
// its own node (as every sharq chunk is), pack puts them all on one node.
// Sharing: shared (the default) or excl, the job's nodes run no other job
// while it runs; exclhost is the same here (a sharq node is a host).
// Grouping is a level of the partition's topology (parseGroup). A place
// value replaces an earlier one as a whole (what it leaves out is the
// default), as in PBS.
func parsePlace(val string, r *resSpec) error {
	var arr, sharing string
	var group *groupSpec
	for _, p := range strings.Split(val, ":") {
		lp := strings.ToLower(p)
		switch lp {
		case "free", "scatter", "vscatter", "pack":
			if arr != "" {
				return fmt.Errorf("%w place=%s: two arrangements (%s and %s); give one of free, scatter, vscatter or pack", ErrBadResource, val, arr, p)
			}
			arr = lp
		case "shared", "excl", "exclhost":
			if sharing != "" {
				return fmt.Errorf("%w place=%s: two sharing values (%s and %s); give one of shared, excl or exclhost", ErrBadResource, val, sharing, p)
			}
			sharing = lp
		default:
			if strings.HasPrefix(lp, "group=") || strings.HasPrefix(lp, "prefer_group=") {
				if group != nil {
					return fmt.Errorf("%w place=%s: two groupings; give one group= or prefer_group=", ErrBadResource, val)
				}
				g, err := parseGroup(p)
				if err != nil {
					return fmt.Errorf("%w place=%s: %w", ErrBadResource, val, err)
				}
				group = &g
				continue
			}
			if group != nil && group.Wait > 0 && strings.Trim(p, "0123456789") == "" {
				return fmt.Errorf("%w place=%s: a group's wait takes no colons (a colon separates place's parts): write it as 2h or 90m", ErrBadResource, val)
			}
			return fmt.Errorf("%w place=%s: %q is not free, scatter, vscatter, pack, shared, excl, exclhost, group= or prefer_group=", ErrBadResource, val, p)
		}
	}
	pack, excl := arr == "pack", sharing == "excl" || sharing == "exclhost"
	if group == nil {
		group = &groupSpec{}
	}
	r.Pack, r.Excl, r.Group = &pack, &excl, group
	return nil
}

// groupSpec is a place value's grouping: a topology level, required
// (group=LEVEL), required for at most Wait (group=LEVEL@TIME), or
// preferred (prefer_group=LEVEL).
type groupSpec struct {
	Level     string
	Preferred bool
	Wait      time.Duration
}

// parseGroup reads group=LEVEL, group=LEVEL@TIME (TIME a duration without
// colons, e.g. 30m or 2h: a colon separates place's parts) and
// prefer_group=LEVEL. Whether LEVEL is a level of the job's partition's
// topology is the controller's to say.
func parseGroup(p string) (groupSpec, error) {
	key, level, _ := strings.Cut(p, "=")
	g := groupSpec{Preferred: strings.EqualFold(key, "prefer_group")}
	level, wait, timed := strings.Cut(level, "@")
	if level == "" || len(level) > 63 {
		return g, fmt.Errorf("%s: want a topology level such as rack or switch", p)
	}
	g.Level = level
	if timed {
		if g.Preferred {
			return g, fmt.Errorf("%s: a preferred group takes no wait (group=%s@TIME is required for at most TIME)", p, level)
		}
		d, err := conf.ParseDuration(wait)
		if err != nil || d <= 0 {
			return g, fmt.Errorf("%s: want a wait such as %s@30m (a duration above zero, without colons)", p, level)
		}
		g.Wait = d
	}
	return g, nil
}

func parseCount(key, val string) (int, error) {
	n, err := strconv.Atoi(val)
	if err != nil || n < 0 || val[0] == '+' {
		return 0, fmt.Errorf("%w %s=%s: want a whole number of at least 0", ErrBadResource, key, val)
	}
	if n > 1<<20 {
		return 0, fmt.Errorf("%w %s=%s: too large", ErrBadResource, key, val)
	}
	return n, nil
}

// formatSelect writes a job's resources as a PBS select statement.
func formatSelect(r api.Resources) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d:ngpus=%d", max(r.Nodes, 1), r.GPUsPerNode)
	if r.CPUsPerNode > 0 {
		fmt.Fprintf(&b, ":ncpus=%d", r.CPUsPerNode)
	}
	if r.MemPerNode > 0 {
		fmt.Fprintf(&b, ":mem=%s", conf.FormatSize(r.MemPerNode))
	}
	if r.MPIProcs > 0 {
		fmt.Fprintf(&b, ":mpiprocs=%d", r.MPIProcs)
	}
	if r.OMPThreads > 0 {
		fmt.Fprintf(&b, ":ompthreads=%d", r.OMPThreads)
	}
	if len(r.Labels) > 0 {
		b.WriteString(":" + strings.ReplaceAll(conf.FormatLabels(r.Labels), ",", ":"))
	}
	return b.String()
}

// formatGroup writes a job's topology request as place's grouping:
// group=rack, group=rack@30m0s, prefer_group=rack; "" for none.
func formatGroup(r api.Resources) string {
	switch {
	case r.Group == "":
		return ""
	case r.GroupPreferred:
		return "prefer_group=" + r.Group
	case r.GroupWait > 0:
		return "group=" + r.Group + "@" + r.GroupWait.String()
	}
	return "group=" + r.Group
}
