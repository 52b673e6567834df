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
			NeverFitsFailAfter: p.NeverFitsFailAfter}
	}
	for i, n := range c.Nodes {
		sc.Nodes[i] = sched.Node{Name: n.Name, Partition: n.Partition, GPUs: n.GPUs, CPUs: n.CPUs, MemBytes: n.MemBytes, Labels: n.Labels}
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
	return sc
}
