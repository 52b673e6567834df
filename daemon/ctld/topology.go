package ctld

import (
	"fmt"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// maxGroupLen bounds a job's topology level name (a level name is 1 to 63
// bytes).
const maxGroupLen = 63

// checkTopology checks a job's topology request (qsub -l place=group=LEVEL)
// against its partition: the level must be one of the partition's
// topology's levels; a preferred request takes no wait. Whether a domain
// of the level is big enough is the core's (checkCanRun).
func (c *Controller) checkTopology(part string, r *api.Resources) *api.Error {
	if r.Group == "" {
		if r.GroupPreferred || r.GroupWait != 0 {
			return badRequest("a preferred topology or a topology wait needs a level (place=group=LEVEL)")
		}
		return nil
	}
	switch {
	case len(r.Group) > maxGroupLen:
		return badRequest(fmt.Sprintf("place=group: a level name of %d bytes (at most %d)", len(r.Group), maxGroupLen))
	case r.GroupWait < 0 || r.GroupWait > sched.MaxTopologyWait:
		return badRequest(fmt.Sprintf("place=group=%s@%v: the wait must be 0 to %v", r.Group, r.GroupWait, sched.MaxTopologyWait))
	case r.GroupPreferred && r.GroupWait != 0:
		return badRequest("place=prefer_group takes no wait (a wait is for a required group)")
	}
	t := c.cfg.PartitionTopology(part)
	if t == nil {
		return badRequest(fmt.Sprintf("place=group=%s: partition %s has no topology", r.Group, part))
	}
	if !t.HasLevel(r.Group) {
		return badRequest(fmt.Sprintf("place=group=%s: not a level of partition %s's topology %s (levels: %s)", r.Group, part, t.Name, strings.Join(t.Levels, ", ")))
	}
	return nil
}

// topologyRequest is the core's form of a job's request.
func topologyRequest(r api.Resources) sched.TopologyRequest {
	return sched.TopologyRequest{Level: r.Group, Preferred: r.GroupPreferred, Wait: r.GroupWait}
}

// jobDomains is what qstat -f shows of where a running job sits: the
// domains ("LEVEL=NAME") of its nodes at the level it asked for, else its
// partition's default level, else the topology's innermost level; nil
// when its partition has no topology.
func (c *Controller) jobDomains(j *job) []string {
	t := c.cfg.PartitionTopology(j.Partition)
	if t == nil || len(j.Allocs) == 0 {
		return nil
	}
	level := j.Resources.Group
	if !t.HasLevel(level) {
		level = c.cfg.Partition(j.Partition).DefaultTopologyLevel
	}
	if level == "" {
		level = t.Levels[len(t.Levels)-1]
	}
	nodes := make([]string, len(j.Allocs))
	for i, a := range j.Allocs {
		nodes[i] = a.Node
	}
	var out []string
	for _, d := range c.core.DomainsOf(j.Partition, level, nodes) {
		if d == "" {
			d = "-" // a node in no domain of the level
		}
		out = append(out, level+"="+d)
	}
	return out
}

// nvlinkPeers is what a node's NVML said of its GPUs' NVLink peers, for
// the core (by GPU index below gpus); nil when it said nothing of links
// (the configuration's nvlink groups then hold).
func nvlinkPeers(inv *api.Inventory, gpus int) [][]int {
	if inv.Source != "nvml" {
		return nil
	}
	var peers [][]int
	for _, g := range inv.GPUs {
		if g.Topology == "" || g.Index < 0 || g.Index >= gpus {
			continue
		}
		if peers == nil {
			peers = make([][]int, gpus)
		}
		for _, p := range g.NVLinkPeers() {
			if p < gpus && p != g.Index {
				peers[g.Index] = append(peers[g.Index], p)
			}
		}
	}
	return peers
}
