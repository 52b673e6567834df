package ctld

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/conf"
	"github.com/sharq-hpc/sharq/daemon/sched"
)

// checkCanRun refuses a job no node or share could ever run, as PBS's qsub
// refuses one beyond the queue's or server's limits (PBSE_EXCQRESC), with
// PBS's words and what the job asked for. The scheduling core decides, from
// what it knows of the nodes and shares (sched.Scheduler.NeverFits): a job
// it would hold at once as NeverFits or QuotaLimitExceeded is refused here
// instead. (A job that becomes unable to run later, when nodes shrink or a
// reconfiguration lowers a quota, is still held, as before.)
func (c *Controller) checkCanRun(j *job) *api.Error {
	sj, err := j.schedJob(c.cfg.Cluster.Name)
	if err != nil {
		return badRequest(err.Error())
	}
	r := j.Resources
	n := max(r.Nodes, 1)
	var why string
	switch c.core.NeverFits(sj) {
	case sched.ReasonNeverFits:
		why = fmt.Sprintf("%s: partition %s has no %s", chunkWords(r), j.Partition, nodesWords(n))
	case sched.ReasonQuotaLimit:
		why = fmt.Sprintf("%d GPUs: more than share %s can ever hold (its quota and what it may borrow)", n*r.GPUsPerNode, j.Share)
	case sched.ReasonTopologyNoDomain:
		why = fmt.Sprintf("place=group=%s, %s: no %s of partition %s has %s", r.Group, chunkWords(r), r.Group, j.Partition, nodesWords(n))
	default:
		return nil
	}
	return &api.Error{Code: api.CodeResourceLimit, Message: "Job violates queue and/or server resource limits (" + why + ")"}
}

// chunkWords writes what a job asks for as PBS's select: select=2:ngpus=8.
func chunkWords(r api.Resources) string {
	parts := []string{"select=" + strconv.Itoa(max(r.Nodes, 1)), "ngpus=" + strconv.Itoa(r.GPUsPerNode)}
	if r.CPUsPerNode > 0 {
		parts = append(parts, "ncpus="+strconv.Itoa(r.CPUsPerNode))
	}
	if r.MemPerNode > 0 {
		parts = append(parts, "mem="+conf.FormatSize(r.MemPerNode))
	}
	for _, k := range sortedKeys(r.Labels) {
		parts = append(parts, k+"="+r.Labels[k])
	}
	return strings.Join(parts, ":")
}

func nodesWords(n int) string {
	if n == 1 {
		return "node that large"
	}
	return strconv.Itoa(n) + " nodes that large"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
