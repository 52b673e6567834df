package api

// NodeVersion is the node wire's protocol version (NodeMsg.V): a
// controller refuses a node's hello of another version (RefusedVersion),
// and a node refuses a welcome of another. It is apart from Version, the
// client protocol's, so that either may change alone. Version 2: a start
// order carries a RunSpec, not the controller's job record (version 1).
const NodeVersion = 2

// RunSpec is what a node needs to run its part of a job, resolved by the
// controller: the start order carries it instead of the controller's job
// record, so that the record (its storage format) can change without a
// node upgrade, and a node sees none of the job's accounting, history or
// counters. The image, walltime and grace a node uses are the start
// order's, resolved by the scheduling core.
type RunSpec struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"` // PBS_JOBNAME
	// Share is the job's share (PBS_QUEUE).
	Share string `json:"share,omitempty"`
	// ArrayParent and ArrayIndex are set for an array subjob
	// (PBS_ARRAY_ID, PBS_ARRAY_INDEX).
	ArrayParent string `json:"array_parent,omitempty"`
	ArrayIndex  int    `json:"array_index,omitempty"`
	// Owner is whom the job runs as.
	Owner Owner `json:"owner"`

	Script  string            `json:"script,omitempty"`  // the batch script, or
	Shell   string            `json:"shell,omitempty"`   // (qsub -S: its interpreter)
	Command []string          `json:"command,omitempty"` // argv (qsub -- cmd args)
	WorkDir string            `json:"workdir"`
	Env     map[string]string `json:"env,omitempty"` // the job's own variables (qsub -v/-V, PBS_O_*)
	// Stdout and Stderr are the resolved output paths (the same path
	// when joined).
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Umask is qsub -W umask (ParseUmask).
	Umask string `json:"umask,omitempty"`
	// Interactive is qsub -I: the node serves its session.
	Interactive bool `json:"interactive,omitempty"`

	Resources RunResources `json:"resources"`
}

// RunResources is what one node gives the job, with the defaults the
// controller filled at start (ncpus, mem).
type RunResources struct {
	CPUsPerNode int   `json:"cpus_per_node,omitempty"` // 0: not limited
	MemPerNode  int64 `json:"mem_per_node,omitempty"`  // bytes; 0: not limited
	// MPIProcs is the MPI ranks per node (PBS_NODEFILE's lines per node;
	// 0: one); OMPThreads is OMP_NUM_THREADS (0: CPUs over ranks).
	MPIProcs   int `json:"mpiprocs,omitempty"`
	OMPThreads int `json:"ompthreads,omitempty"`
}
