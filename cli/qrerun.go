package cli

import (
	"context"

	"github.com/sharq-hpc/sharq/api"
)

// Qrerun puts running jobs back in the queue (qrerun ID...).
func Qrerun(ctx context.Context, args []string, sys *Sys) int {
	return idsCommand(ctx, args, sys, "qrerun", api.OpRerun, "put running jobs back in the queue",
		`Stops each running job as a preemption does (SIGTERM, then SIGKILL after its grace
period: a job that saves a checkpoint on SIGTERM saves it) and puts it back in its
share's queue at its place once it has exited, whatever its exit status; it starts
again as its next run ($SHARQ_RESTART_COUNT), with its checkpoint directory. A rerun
is not counted against the job's preemption retries. Only the owner (or an admin)
may rerun a job, and only a running one: a queued, held, finished or stopping job is
refused (exit 168, "Request invalid for state of job"), an unknown one with exit 153.
An interactive job cannot be rerun. '125[]' reruns the running subjobs of an array.

Examples:
   qrerun 123
   qrerun '125[]'`)
}
