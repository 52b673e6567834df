package schedconf

import (
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// Config converts the cluster configuration for the scheduling core.
func Config(c *conf.Config) sched.Config {
	sc := sched.Config{
		Partitions: make([]sched.Partition, len(c.Partitions)),
		Nodes:      make([]sched.Node, len(c.Nodes)),
		Shares:     make([]sched.Share, len(c.Shares)),

		FairShare:     c.Scheduler.FairShare,
		UsageHalfLife: c.Scheduler.UsageHalfLife,
		Backfill:      c.Scheduler.Backfill,

		FairPreemption:      c.Scheduler.FairPreemption,
		FairPreemptionAfter: c.Scheduler.FairPreemptionAfter,
	}
	for i, p := range c.Partitions {
		sc.Partitions[i] = sched.Partition{Name: p.Name, PreemptionRetries: p.PreemptionRetries, NodeFailureRetries: p.NodeFailureRetries,
			StartFailureRetries: p.StartFailureRetries, CheckpointsLocal: p.CheckpointsLocal, DefaultWalltime: p.DefaultWalltime,
			PreemptGrace: p.PreemptGrace, MaxPreemptGrace: p.MaxPreemptGrace, DefaultImage: p.DefaultImage,
			Topology: p.Topology, DefaultTopologyLevel: p.DefaultTopologyLevel,
			NeverFitsFailAfter: p.NeverFitsFailAfter}
	}
	for i, n := range c.Nodes {
		sc.Nodes[i] = sched.Node{Name: n.Name, Partition: n.Partition, GPUs: n.GPUs, CPUs: n.CPUs, MemBytes: n.MemBytes, Labels: n.Labels,
			GPUPeers: groupPeers(n.NVLinkGroups, n.GPUs)}
	}
	for i, s := range c.Shares {
		sc.Shares[i] = sched.Share{
			Name:              s.Name,
			Partition:         s.Partition,
			GPUs:              s.GPUs,
			Strategy:          s.Strategy,
			BorrowLimit:       s.BorrowLimit,
			InSharePreemption: s.InSharePreemption,

			FairWeight:            s.FairWeight,
			FairShareUsers:        s.FairShareUsers,
			MaxRunningJobsPerUser: s.MaxRunningJobsPerUser,
			MaxGPUsPerUser:        s.MaxGPUsPerUser,
		}
	}
	for _, t := range c.Topologies {
		st := sched.Topology{Name: t.Name, Levels: t.Levels, Domains: make([]sched.Domain, len(t.Domains))}
		for i, d := range t.Domains {
			st.Domains[i] = sched.Domain{Level: d.Level, Name: d.Name, Nodes: d.Nodes}
		}
		sc.Topologies = append(sc.Topologies, st)
	}
	return sc
}

// groupPeers turns NVLink groups into each GPU's peers (nil without
// groups).
func groupPeers(groups [][]int, gpus int) [][]int {
	if len(groups) == 0 {
		return nil
	}
	peers := make([][]int, gpus)
	for _, g := range groups {
		for _, i := range g {
			for _, p := range g {
				if p != i {
					peers[i] = append(peers[i], p)
				}
			}
		}
	}
	return peers
}
