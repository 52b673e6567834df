package ctld

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
)

// maxDefaultMem caps a default memory limit computed from a partition's
// per-GPU or per-CPU default (it is a product of bounded numbers).
const maxDefaultMem = 1 << 60

// submitDefaults gives a job that names no ncpus or mem its partition's
// default_ncpus, default_mem_per_gpu (times its GPUs) or
// default_mem_per_cpu (times its CPUs), as Slurm's DefMemPerGPU and
// DefMemPerCPU: the scheduler counts them and the node enforces them. What
// the partition sets no default for is filled from the job's nodes when it
// starts (startDefaults).
func submitDefaults(p *conf.Partition, r *api.Resources) {
	if r.CPUsPerNode == 0 && p.DefaultNCPUs > 0 {
		r.CPUsPerNode = p.DefaultNCPUs
	}
	if r.MemPerNode != 0 {
		return
	}
	switch {
	case r.GPUsPerNode > 0 && p.DefaultMemPerGPU > 0:
		r.MemPerNode = mulCap(p.DefaultMemPerGPU, r.GPUsPerNode)
	case r.GPUsPerNode == 0 && p.DefaultMemPerCPU > 0:
		r.MemPerNode = mulCap(p.DefaultMemPerCPU, max(1, r.CPUsPerNode))
	case p.DefaultMemPerCPU > 0 && r.CPUsPerNode > 0:
		r.MemPerNode = mulCap(p.DefaultMemPerCPU, r.CPUsPerNode)
	}
}

// mulCap is a*n, at most maxDefaultMem.
func mulCap(a int64, n int) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(n))
	if hi != 0 || lo > maxDefaultMem {
		return maxDefaultMem
	}
	return int64(lo)
}

// shareOf is total*part/whole rounded up, at most total.
func shareOf(total int64, part, whole int) int64 {
	if whole <= 0 || part >= whole {
		return total
	}
	hi, lo := bits.Mul64(uint64(total), uint64(part))
	q, rem := bits.Div64(hi, lo, uint64(whole)) // hi < whole: part < whole
	if rem > 0 {
		q++
	}
	return min(int64(q), total)
}

// nodeShape is a node's CPUs, memory and GPUs: as configured, else as the
// node reported them.
func (c *Controller) nodeShape(name string) (cpus int, mem int64, gpus int) {
	if cn := c.cfg.Node(name); cn != nil {
		cpus, mem, gpus = cn.CPUs, cn.MemBytes, cn.GPUs
	}
	if inv := c.node(name).inventory; inv != nil {
		if cpus <= 0 {
			cpus = inv.CPUs
		}
		if mem <= 0 {
			mem = inv.MemBytes
		}
		if gpus <= 0 {
			gpus = len(inv.GPUs)
		}
	}
	return max(cpus, 0), max(mem, 0), max(gpus, 0)
}

// startDefaults fills what a starting job still lacks of ncpus and mem
// with its share of the nodes it starts on (the smallest of them): the
// node's CPUs and memory times its GPUs over the node's GPUs, rounded up;
// a job without GPUs gets one CPU (what the scheduler counted) and that
// CPU's share of memory; an exclusive job gets whole nodes. They are
// written into the job (qstat -f shows them; a requeued job keeps them) so
// that no job runs without a CPU quota and a memory limit (SECURITY.md).
func (c *Controller) startDefaults(j *job, nodes []string) {
	r := &j.Resources
	if r.CPUsPerNode > 0 && r.MemPerNode > 0 {
		return
	}
	cpus, mem := 0, int64(0)
	for i, name := range nodes {
		nc, nm, ng := c.nodeShape(name)
		var ccpu int
		var cmem int64
		switch {
		case r.Exclusive:
			ccpu, cmem = nc, nm
		case r.GPUsPerNode > 0 && ng > 0:
			ccpu = int(shareOf(int64(nc), r.GPUsPerNode, ng))
			cmem = shareOf(nm, r.GPUsPerNode, ng)
		default:
			ccpu = min(1, nc)
			cmem = shareOf(nm, max(1, r.CPUsPerNode), nc)
		}
		if i == 0 || ccpu < cpus {
			cpus = ccpu
		}
		if i == 0 || cmem < mem {
			mem = cmem
		}
	}
	var set []string
	if r.CPUsPerNode == 0 && cpus > 0 {
		r.CPUsPerNode = cpus
		set = append(set, fmt.Sprintf("ncpus=%d", cpus))
	}
	if r.MemPerNode == 0 && mem > 0 {
		r.MemPerNode = mem
		set = append(set, "mem="+conf.FormatSize(mem))
	}
	if len(set) > 0 {
		j.history(c.now(), "defaults per node: "+strings.Join(set, " ")+" (its share of "+strings.Join(nodes, " ")+")")
	}
}
