package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// interactive is the rest of qsub -I once the job is queued: wait for it
// to start (Ctrl-C meanwhile deletes it), then open its own session.
func interactive(ctx context.Context, sys *Sys, id string) error {
	fmt.Fprintf(sys.Stderr, "qsub: waiting for job %s to start\n", id)
	delay := 50 * time.Millisecond
	for {
		resp, err := sys.Call(ctx, api.Request{V: api.Version, Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{id}, Finished: false}})
		if ctx.Err() != nil {
			return deleteWaiting(sys, id)
		}
		var ae *api.Error
		if errors.As(err, &ae) {
			return fmt.Errorf("waiting for %s: %w", id, err)
		}
		if err == nil {
			var j *api.Job
			for i := range resp.Jobs {
				if resp.Jobs[i].ID == id {
					j = &resp.Jobs[i]
				}
			}
			switch {
			case j == nil || j.State == api.StateFinished:
				why := "it is no longer in the queue"
				if j != nil && j.Reason != "" {
					why = j.Reason
				}
				fmt.Fprintf(sys.Stderr, "qsub: job %s ended before it started: %s\n", id, printable(why))
				return exitStatus(ExitFailure)
			case j.State == api.StateRunning:
				fmt.Fprintf(sys.Stderr, "qsub: job %s ready\n", id)
				return openSession(ctx, sys, "qsub", api.SessionSpec{Job: id, Primary: true})
			case j.State == api.StateExiting:
				fmt.Fprintf(sys.Stderr, "qsub: job %s is stopping before its session opened\n", id)
				return exitStatus(ExitFailure)
			}
		}
		select {
		case <-ctx.Done():
			return deleteWaiting(sys, id)
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// deleteWaiting deletes an interactive job whose qsub was interrupted
// while it waited.
func deleteWaiting(sys *Sys, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := sys.Call(ctx, api.Request{V: api.Version, Op: api.OpDelete, IDs: []string{id}}); err != nil {
		fmt.Fprintf(sys.Stderr, "qsub: interrupted; deleting job %s failed: %v\n", id, err)
		return exitStatus(130)
	}
	fmt.Fprintf(sys.Stderr, "qsub: job %s deleted\n", id)
	return exitStatus(130)
}
