package sched

// Reason is a typed explanation of a pending (or failed) job's state.
// String gives the word qstat shows as is.
type Reason uint8

const (
	ReasonNone                 Reason = iota
	ReasonPriority                    // jobs ahead of it in its share's queue go first
	ReasonResources                   // not enough free GPUs on usable nodes (that its share may take: not RESERVE shares' idle quota)
	ReasonQuota                       // its share is at its quota and nothing can be borrowed
	ReasonBorrowLimit                 // borrowing more would pass the share's borrow limit
	ReasonPreempting                  // victims were sent SIGTERM; it starts when they exit
	ReasonHeld                        // a user or admin hold
	ReasonDependency                  // waiting for its dependencies
	ReasonBeginTime                   // qsub -a: its start time has not come
	ReasonArrayLimit                  // the array's %max subjobs are running
	ReasonNeverFits                   // more per node (or more nodes) than the partition has
	ReasonShareRemoved                // its share is no longer in the configuration
	ReasonNodesDown                   // no usable node in its partition
	ReasonDependencyNeverMet          // failed: a dependency can no longer be satisfied
	ReasonPreemptionRetries           // failed: preempted more often than preemption_retries
	ReasonNodeFailureRetries          // failed: lost its node more often than node_failure_retries
	ReasonStartFailureRetries         // failed: its start failed more often than start_failure_retries
	ReasonCPUs                        // enough free GPUs, but no node has the CPUs it counts free
	ReasonMemory                      // enough free GPUs and CPUs, but no node has its memory free
	ReasonQuotaLimit                  // more GPUs than its share can ever hold (quota plus borrow limit)
	ReasonFragmented                  // enough GPUs free in total, but split across nodes: too few nodes hold its GPUs per node
	ReasonReclaimingForFit            // like ReasonPreempting, but free GPUs hold it in total: victims leave so that its nodes fit
	ReasonNoIdleNodes                 // place=excl: too few usable nodes are idle (no job on them)
	ReasonFairShare                   // a borrower of a share with less decayed usage per weight goes first (fair share)
	ReasonUserJobLimit                // its user runs the share's max_running_jobs_per_user jobs
	ReasonUserGPULimit                // starting it would pass the share's max_gpus_per_user for its user
	ReasonBackfillWouldDelay          // it fits only on reserved GPUs (or in the quota kept for a reserved job) and would still run when the reservation starts
	ReasonInteractivePreempted        // failed: an interactive job was preempted (its session cannot be requeued)
	ReasonInteractiveNodeLost         // failed: an interactive job lost its node
	ReasonStartRefused                // failed: a node refused the job itself (its work directory or an output path)
	ReasonTopologyNoDomain            // it requires a topology level no domain of its partition is big enough for
	ReasonTopologyWaiting             // it requires one domain: free nodes would hold it, but no domain's do yet
	ReasonNeverFitsTimeLimit          // failed: held as never fitting for its partition's NeverFitsFailAfter
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonNone:                 "None",
	ReasonPriority:             "Priority",
	ReasonResources:            "Resources",
	ReasonQuota:                "QuotaExhausted",
	ReasonBorrowLimit:          "BorrowLimit",
	ReasonPreempting:           "WaitingForPreemption",
	ReasonHeld:                 "Held",
	ReasonDependency:           "Dependency",
	ReasonBeginTime:            "BeginTime",
	ReasonArrayLimit:           "ArrayTaskLimit",
	ReasonNeverFits:            "RequestExceedsLimits",
	ReasonShareRemoved:         "ShareRemoved",
	ReasonNodesDown:            "NodesDown",
	ReasonDependencyNeverMet:   "DependencyNeverSatisfied",
	ReasonPreemptionRetries:    "PreemptionRetriesExhausted",
	ReasonNodeFailureRetries:   "NodeFailureRetriesExhausted",
	ReasonStartFailureRetries:  "StartFailureRetriesExhausted",
	ReasonCPUs:                 "InsufficientCPUs",
	ReasonMemory:               "InsufficientMemory",
	ReasonQuotaLimit:           "QuotaLimitExceeded",
	ReasonFragmented:           "Fragmented",
	ReasonReclaimingForFit:     "ReclaimingForFit",
	ReasonNoIdleNodes:          "NoIdleNodes",
	ReasonFairShare:            "FairShare",
	ReasonUserJobLimit:         "UserJobLimit",
	ReasonUserGPULimit:         "UserGPULimit",
	ReasonBackfillWouldDelay:   "BackfillWouldDelay",
	ReasonInteractivePreempted: "InteractivePreempted",
	ReasonInteractiveNodeLost:  "InteractiveNodeLost",
	ReasonStartRefused:         "StartRefused",
	ReasonTopologyNoDomain:     "TopologyNoDomain",
	ReasonTopologyWaiting:      "TopologyWaiting",
	ReasonNeverFitsTimeLimit:   "NeverFitsTimeLimit",
}

// NeverFits says whether r is one of the reasons of a request that can never
// start as it is (the core holds such a job with HoldSystem): it names the
// limit the request passes.
func (r Reason) NeverFits() bool {
	return r == ReasonNeverFits || r == ReasonQuotaLimit || r == ReasonTopologyNoDomain
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "Unknown"
}
