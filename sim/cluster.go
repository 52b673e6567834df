package sim

import (
	"fmt"

	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/daemon/schedconf"
)

// Cluster is what a simulation needs from the configuration: the core's
// part (each partition's preempt_grace, the grace of jobs whose trace row
// gives none, included: the core resolves every run's grace).
type Cluster struct {
	Sched sched.Config
	// TopologyOff runs the core without the topologies and the jobs
	// without their groups; the result still measures spans with the
	// topologies (topology.go).
	TopologyOff bool
}

// TotalGPUs counts the GPUs of every node.
func (c *Cluster) TotalGPUs() int {
	n := 0
	for _, nd := range c.Sched.Nodes {
		n += nd.GPUs
	}
	return n
}

// share returns the share called name, or nil.
func (c *Cluster) share(name string) *sched.Share {
	for i := range c.Sched.Shares {
		if c.Sched.Shares[i].Name == name {
			return &c.Sched.Shares[i]
		}
	}
	return nil
}

// clone copies the configuration deeply enough for a variant to change it.
func (c Cluster) clone() Cluster {
	var out Cluster
	out.Sched = c.Sched // the switches (fair share, ...); slices copied below
	out.Sched.Partitions = append([]sched.Partition(nil), c.Sched.Partitions...)
	out.Sched.Nodes = append([]sched.Node(nil), c.Sched.Nodes...)
	out.Sched.Shares = append([]sched.Share(nil), c.Sched.Shares...)
	out.Sched.Backfill = c.Sched.Backfill
	out.TopologyOff = c.TopologyOff
	return out
}

// ValidateTrace checks the trace against the cluster: every job's share
// must exist. Bad rows come back as a *TraceError.
func ValidateTrace(c *Cluster, jobs []TraceJob) error {
	var errs rowErrors
	for i := range jobs {
		if c.share(jobs[i].Share) == nil {
			errs.add(jobs[i].Line, colShare, fmt.Errorf("%w %q (job %s)", ErrUnknownShare, jobs[i].Share, jobs[i].ID))
		} else if err := c.checkGroup(&jobs[i]); err != nil {
			errs.add(jobs[i].Line, colGroup, err)
		}
	}
	return errs.err("")
}

// FromConf takes the simulation's cluster from a loaded configuration.
func FromConf(c *conf.Config) Cluster {
	return Cluster{Sched: schedconf.Config(c)}
}

// LoadCluster loads a configuration file for simulation.
func LoadCluster(path string) (Cluster, error) {
	c, err := conf.Load(path)
	if err != nil {
		return Cluster{}, err
	}
	return FromConf(c), nil
}
