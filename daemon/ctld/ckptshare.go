package ctld

import (
	"fmt"
	"slices"
	"sort"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// checkpointProblems finds the partitions whose checkpoint_root is meant to
// be shared (checkpoints = "shared", the default) but whose nodes see
// different marker files in it: a job preempted on one of them and
// resumed on another would not find its checkpoint. It returns, by node,
// the problem to show; nodes that have not reported are left out.
func checkpointProblems(cfg *conf.Config, nodes []api.NodeStatus) map[string]string {
	type group struct{ marker, root string }
	byPart := map[string]map[group][]string{}
	for _, n := range nodes {
		if n.Inventory == nil || n.Inventory.Checkpoint == nil || n.Inventory.Checkpoint.Marker == "" {
			continue
		}
		p := cfg.Partition(n.Partition)
		if p == nil || p.CheckpointsLocal {
			continue
		}
		ck := n.Inventory.Checkpoint
		if byPart[p.Name] == nil {
			byPart[p.Name] = map[group][]string{}
		}
		g := group{ck.Marker, ck.Root}
		byPart[p.Name][g] = append(byPart[p.Name][g], n.Name)
	}
	out := map[string]string{}
	for part, groups := range byPart {
		if len(groups) < 2 {
			continue
		}
		var all []string
		for _, names := range groups {
			all = append(all, names...)
		}
		sort.Strings(all)
		for g, names := range groups {
			others := slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(names, n) })
			msg := fmt.Sprintf("checkpoint_root %s is not shared across partition %s: %s see another directory there (marker files differ); a job preempted here and resumed there loses its checkpoint (share it, or set checkpoints = \"local\")",
				g.root, part, conf.CompressHostlist(others))
			for _, n := range names {
				out[n] = msg
			}
		}
	}
	return out
}
