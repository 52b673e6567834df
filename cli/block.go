package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// waitJob is qsub -W block=true: it waits for the job to end (reconnecting
// while the controller is away) and ends qsub with the job's exit status.
func waitJob(ctx context.Context, sys *Sys, id string) error {
	delay := sys.RetryDelay
	if delay <= 0 {
		delay = time.Second
	}
	warned := false
	for {
		resp, err := sys.Call(ctx, api.Request{V: api.Version, Op: api.OpWait, IDs: []string{id}})
		if err == nil {
			return jobExit(sys, resp, id)
		}
		var ae *api.Error
		if errors.As(err, &ae) {
			return fmt.Errorf("waiting for %s: %w", id, err)
		}
		if ctx.Err() != nil {
			fmt.Fprintf(sys.Stderr, "qsub: stopped waiting for %s (the job itself is not affected)\n", id)
			return exitStatus(130)
		}
		if !warned {
			fmt.Fprintf(sys.Stderr, "qsub: waiting for %s: %v; retrying\n", id, err)
			warned = true
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			fmt.Fprintf(sys.Stderr, "qsub: stopped waiting for %s (the job itself is not affected)\n", id)
			return exitStatus(130)
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// jobExit turns the finished job in resp into qsub's exit status: the job's
// own for 0-255, 128+N for a job killed by signal N (PBS's 256+N), 1 for a
// job that could not run.
func jobExit(sys *Sys, resp *api.Response, id string) error {
	var job *api.Job
	for i := range resp.Jobs {
		if resp.Jobs[i].ID == id || job == nil {
			job = &resp.Jobs[i]
		}
	}
	if job == nil {
		return fmt.Errorf("sharqctld did not return job %s when it ended", id)
	}
	if job.ExitStatus == nil {
		why := job.Reason
		if why == "" {
			why = "state " + string(job.State)
		}
		fmt.Fprintf(sys.Stderr, "qsub: job %s ended without an exit status (%s)\n", job.ID, why)
		return exitStatus(ExitFailure)
	}
	s := *job.ExitStatus
	switch {
	case s >= 0 && s <= 255:
		return exitStatus(s)
	case s > 256:
		return exitStatus(min(128+s-256, 255))
	}
	fmt.Fprintf(sys.Stderr, "qsub: job %s could not run (exit status %d)\n", job.ID, s)
	return exitStatus(ExitFailure)
}
