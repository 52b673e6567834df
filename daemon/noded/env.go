package noded

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sharq-hpc/sharq/api"
)

// defaultPath is PATH in a job that brings none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// jobEnv is everything a job's environment needs beyond its order.
type jobEnv struct {
	Node          string
	NodeFile      string    // PBS_NODEFILE, as the job sees it
	CheckpointDir string    // SHARQ_CHECKPOINT_DIR, as the job sees it
	GPUs          []api.GPU // the assigned GPUs, in order
	Clients       jobClients
	Home          string // the owner's home directory; "" = unknown
}

// buildEnv gives a job's complete environment, sorted by name: the job's
// own variables (qsub -v / -V, PBS_O_*), then sharq's and PBS's, which win.
// HOME, PATH, USER and LOGNAME are the login ones unless the job sets them.
// CUDA_VISIBLE_DEVICES holds the assigned GPUs' host indices, the ones
// whose /dev/nvidiaN nodes the container has, with CUDA_DEVICE_ORDER set so
// CUDA numbers GPUs as NVML and nvidia-smi do; NVIDIA_VISIBLE_DEVICES names
// them by UUID when every UUID is known. A job without GPUs gets an empty
// CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES=void.
func buildEnv(o *api.StartOrder, e jobEnv) []string {
	j := &o.Job
	env := make(map[string]string, len(j.Env)+20)
	for k, v := range j.Env {
		if validEnvName(k) && !strings.ContainsRune(v, 0) {
			env[k] = v
		}
	}
	setDefault := func(k, v string) {
		if _, ok := env[k]; !ok {
			env[k] = v
		}
	}
	setDefault("PATH", defaultPath)
	// HOME is the user's home, as at a login prompt (qsub -v HOME=...
	// still wins); the submit directory when the node does not know it.
	if e.Home != "" {
		setDefault("HOME", e.Home)
	}
	setDefault("HOME", j.WorkDir)
	if j.Owner.User != "" {
		env["USER"] = j.Owner.User
		env["LOGNAME"] = j.Owner.User
	}

	env["PBS_JOBID"] = j.ID
	env["PBS_JOBNAME"] = j.Name
	env["PBS_O_WORKDIR"] = j.WorkDir
	env["PBS_QUEUE"] = j.Share
	env["PBS_NODEFILE"] = e.NodeFile
	env["PBS_ENVIRONMENT"] = "PBS_BATCH"
	if j.ArrayParent != "" {
		env["PBS_ARRAY_ID"] = j.ArrayParent
		env["PBS_ARRAY_INDEX"] = strconv.Itoa(j.ArrayIndex)
	}
	if j.Resources.CPUsPerNode > 0 {
		env["NCPUS"] = strconv.Itoa(j.Resources.CPUsPerNode)
	}
	// OMP_NUM_THREADS as PBS sets it: ompthreads, else the node's CPUs
	// over its MPI ranks; a job's own -v OMP_NUM_THREADS wins.
	if t := j.Resources.OMPThreads; t > 0 {
		setDefault("OMP_NUM_THREADS", strconv.Itoa(t))
	} else if c := j.Resources.CPUsPerNode; c > 0 {
		setDefault("OMP_NUM_THREADS", strconv.Itoa(max(c/max(j.Resources.MPIProcs, 1), 1)))
	}
	env["SHARQ_NODE"] = e.Node
	env["SHARQ_RESTART_COUNT"] = strconv.Itoa(o.Run)
	env["SHARQ_CHECKPOINT_DIR"] = e.CheckpointDir

	idx := make([]string, len(e.GPUs))
	uuids := make([]string, 0, len(e.GPUs))
	for i, g := range e.GPUs {
		idx[i] = strconv.Itoa(g.Index)
		if g.UUID != "" {
			uuids = append(uuids, g.UUID)
		}
	}
	env["SHARQ_GPUS"] = strings.Join(idx, ",")
	env["CUDA_VISIBLE_DEVICES"] = strings.Join(idx, ",")
	switch {
	case len(e.GPUs) == 0:
		env["NVIDIA_VISIBLE_DEVICES"] = "void"
	case len(uuids) == len(e.GPUs):
		env["NVIDIA_VISIBLE_DEVICES"] = strings.Join(uuids, ",")
		env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
	default:
		env["NVIDIA_VISIBLE_DEVICES"] = strings.Join(idx, ",")
		env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
	}

	e.Clients.setEnv(env)

	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// validEnvName accepts a variable name a shell can use: letters, digits
// and underscores, not starting with a digit.
func validEnvName(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
