package noded

import (
	"sync"

	"github.com/sharq-hpc/sharq/runtime"
)

// starting holds the runs whose start order the node has taken and not yet
// finished handling: queued behind the job's earlier work, or making the
// container (seconds on a loaded node). A hello lists them as running. The
// runtime's list cannot: a container being made has no task yet, or a task
// created and not started, which the list reads as a run that ended with
// runtime.ExitStatusLost, or the container is not there at all. A
// controller that reconnects then (its restart, a failover, a dropped
// connection) would finish the job with that status, or requeue it, while
// its container starts anyway: its user's session lost, a run wasted or
// the job run twice.
type starting struct {
	mu   sync.Mutex
	runs map[startKey]int // how many orders of the run are being handled
}

type startKey struct {
	id  string
	run int
}

func newStarting() *starting { return &starting{runs: map[startKey]int{}} }

// begin records a start order as it is taken, before it is queued.
func (s *starting) begin(id string, run int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[startKey{id, run}]++
}

// end records that the order was handled (started, failed or refused); its
// outcome is in the outbox by then.
func (s *starting) end(id string, run int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := startKey{id, run}
	if s.runs[k]--; s.runs[k] <= 0 {
		delete(s.runs, k)
	}
}

// snapshot returns the runs being started now; a hello takes it before it
// lists the runtime's containers, so a start that ends in between is
// either listed as it is or reported after the hello.
func (s *starting) snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.runs))
	for k := range s.runs {
		out[k.id] = max(out[k.id], k.run)
	}
	return out
}

// overlay returns tasks with the runs of snap (job → run) as running: a
// listed container of such a run, or of an earlier run of the job (which
// the start replaces), is said to run, and a run not listed is added.
func overlay(tasks []runtime.Task, snap map[string]int, node string) []runtime.Task {
	if len(snap) == 0 {
		return tasks
	}
	out := make([]runtime.Task, 0, len(tasks)+len(snap))
	seen := make(map[string]bool, len(snap))
	for _, t := range tasks {
		if run, ok := snap[t.JobID]; ok && t.Run <= run {
			if seen[t.JobID] {
				continue
			}
			t = runtime.Task{JobID: t.JobID, Node: t.Node, Run: run, Running: true}
			seen[t.JobID] = true
		}
		out = append(out, t)
	}
	for id, run := range snap {
		if !seen[id] {
			out = append(out, runtime.Task{JobID: id, Node: node, Run: run, Running: true})
		}
	}
	return out
}
