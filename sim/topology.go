package sim

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Topology in the simulator (issue 33). A trace row's group column asks
// for a topology level, required (rack) or required for at most a wait
// (rack@3600, seconds), as qsub -l place=group=rack and group=rack@1h do;
// --group LEVEL gives every multi-node job without one that request.
// The result counts, for every started multi-node job, the domains its
// nodes span at its level (the innermost level of its partition's
// topology when it asked for none), the share of those jobs placed in
// one domain, and the first waits of the jobs that asked for a group.
// The "topology off" variant of --compare runs the same trace without
// the topology and without the requests, and measures spans with the
// configured topology: what topology-aware placement buys and costs.

// topoStats is what a run measured of topology.
type topoStats struct {
	// MultiNode counts the started multi-node jobs, OneDomain those whose
	// first start was in one domain of their level.
	MultiNode, OneDomain int
	// Spans is the domains each of them spanned at its first start,
	// ascending.
	Spans []int
	// GroupWaits is the first waits of the started jobs that asked for a
	// group in the trace (whatever the variant did with the request),
	// ascending.
	GroupWaits []time.Duration
	// GroupOneDomain counts those placed in one domain of their level,
	// GroupStarted those that started.
	GroupOneDomain, GroupStarted int
}

// OneDomainShare is the share of the started multi-node jobs placed in
// one domain; 0 without any.
func (t *topoStats) OneDomainShare() float64 {
	if t.MultiNode == 0 {
		return 0
	}
	return float64(t.OneDomain) / float64(t.MultiNode)
}

// GroupOneDomainShare is the share of the started jobs that asked for a
// group placed in one domain of it; 0 without any.
func (t *topoStats) GroupOneDomainShare() float64 {
	if t.GroupStarted == 0 {
		return 0
	}
	return float64(t.GroupOneDomain) / float64(t.GroupStarted)
}

// topoMeter measures spans with the configured topology, whatever the
// core was given.
type topoMeter struct {
	// dom[partition][level][node] is the node's domain.
	dom   map[string]map[string]map[string]string
	inner map[string]string // partition -> its topology's innermost level
	part  map[string]string // share -> partition
}

func newTopoMeter(c *sched.Config) *topoMeter {
	m := &topoMeter{dom: map[string]map[string]map[string]string{}, inner: map[string]string{}, part: map[string]string{}}
	byName := map[string]*sched.Topology{}
	for i := range c.Topologies {
		byName[c.Topologies[i].Name] = &c.Topologies[i]
	}
	for _, p := range c.Partitions {
		t := byName[p.Topology]
		if t == nil {
			continue
		}
		levels := map[string]map[string]string{}
		for _, l := range t.Levels {
			levels[l] = map[string]string{}
		}
		for _, d := range t.Domains {
			for _, n := range d.Nodes {
				levels[d.Level][n] = d.Name
			}
		}
		m.dom[p.Name] = levels
		m.inner[p.Name] = t.Levels[len(t.Levels)-1]
	}
	for _, s := range c.Shares {
		m.part[s.Name] = s.Partition
	}
	return m
}

// spans is how many domains allocs span at the job's level (nodes in no
// domain count one each); ok is false when its partition has no topology.
func (m *topoMeter) spans(share, group string, allocs []sched.Alloc) (int, bool) {
	p := m.part[share]
	levels := m.dom[p]
	if levels == nil {
		return 0, false
	}
	level := group
	if levels[level] == nil {
		level = m.inner[p]
	}
	in := levels[level]
	seen := make([]string, 0, len(allocs))
	n := 0
	for _, a := range allocs {
		d, ok := in[a.Node]
		if !ok {
			n++
			continue
		}
		if !slices.Contains(seen, d) {
			seen = append(seen, d)
			n++
		}
	}
	return n, true
}

// record notes a job's first start.
func (t *topoStats) record(m *topoMeter, tj *TraceJob, allocs []sched.Alloc) {
	n, ok := m.spans(tj.Share, tj.Group, allocs)
	if !ok {
		return
	}
	if tj.Nodes > 1 {
		t.MultiNode++
		if n == 1 {
			t.OneDomain++
		}
		t.Spans = append(t.Spans, n)
	}
	if tj.Group != "" {
		t.GroupStarted++
		if n == 1 {
			t.GroupOneDomain++
		}
	}
}

// coreConfig is the core's configuration for a run: the cluster's, or
// without its topologies when TopologyOff.
func (c *Cluster) coreConfig() sched.Config {
	if !c.TopologyOff {
		return c.Sched
	}
	sc := c.Sched
	sc.Topologies = nil
	sc.Partitions = slices.Clone(c.Sched.Partitions)
	for i := range sc.Partitions {
		sc.Partitions[i].Topology, sc.Partitions[i].DefaultTopologyLevel = "", ""
	}
	return sc
}

// topologyRequest is what the core is told of a trace job's group.
func (c *Cluster) topologyRequest(tj *TraceJob) sched.TopologyRequest {
	if c.TopologyOff || tj.Group == "" {
		return sched.TopologyRequest{}
	}
	return sched.TopologyRequest{Level: tj.Group, Wait: tj.GroupWait}
}

// hasTopology says whether any partition of the cluster is placed by a
// topology.
func (c *Cluster) hasTopology() bool {
	for _, p := range c.Sched.Partitions {
		if p.Topology != "" {
			return true
		}
	}
	return false
}

// SetGroup gives every multi-node job of jobs without a group the
// required group level (--group).
func SetGroup(jobs []TraceJob, level string, wait time.Duration) {
	for i := range jobs {
		if jobs[i].Nodes > 1 && jobs[i].Group == "" {
			jobs[i].Group, jobs[i].GroupWait = level, wait
		}
	}
}

// parseGroup reads a group column: LEVEL or LEVEL@SECONDS.
func parseGroup(s string) (string, time.Duration, error) {
	level, wait, timed := strings.Cut(s, "@")
	if level == "" || len(level) > 63 || !validName(level) {
		return "", 0, fmt.Errorf("%w: group %q: want a topology level such as rack, or rack@3600", ErrOutOfRange, s)
	}
	if !timed {
		return level, 0, nil
	}
	d, err := parseSeconds(wait)
	if err != nil || d <= 0 || d > sched.MaxTopologyWait {
		return "", 0, fmt.Errorf("%w: group %q: the wait is seconds above 0, at most %v", ErrOutOfRange, s, sched.MaxTopologyWait)
	}
	return level, d, nil
}

// formatGroup writes a group column.
func formatGroup(j *TraceJob) string {
	if j.Group == "" || j.GroupWait == 0 {
		return j.Group
	}
	return j.Group + "@" + FormatSeconds(j.GroupWait)
}

// writeTopology writes the report's topology lines, when the cluster has a
// topology.
func writeTopology(w io.Writer, r *Result) {
	if !r.Topology {
		return
	}
	t := &r.Topo
	fmt.Fprintf(w, "topology: %d multi-node jobs started, %.1f%% in one domain, domains per job p50 %d p95 %d; %d jobs asked for a group: %.1f%% in one domain, wait p95 %s\n",
		t.MultiNode, 100*t.OneDomainShare(), Percentile(t.Spans, 50), Percentile(t.Spans, 95),
		t.GroupStarted, 100*t.GroupOneDomainShare(), FormatDuration(Percentile(t.GroupWaits, 95)))
}

// checkGroup refuses a job whose group is not a level of its share's
// partition's topology (the core would hold it forever).
func (c *Cluster) checkGroup(j *TraceJob) error {
	if j.Group == "" {
		return nil
	}
	s := c.share(j.Share)
	for _, p := range c.Sched.Partitions {
		if p.Name != s.Partition {
			continue
		}
		for _, t := range c.Sched.Topologies {
			if t.Name == p.Topology && slices.Contains(t.Levels, j.Group) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: group %q (job %s): not a level of partition %s's topology", ErrOutOfRange, j.Group, j.ID, s.Partition)
}
