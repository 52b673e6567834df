package ctld

import (
	"strings"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/spool"
)

// job is the controller's view of one job: its record plus what only
// matters while it runs.
type job struct {
	api.Job
	// parts tracks the nodes of a running job: exited and exit status.
	parts   map[string]*part
	charged int64 // bytes counted against the owner (userbytes.go)
	queued  int   // jobs counted against the owner in its share (queuedlimit.go)
	// startErr is why its last start failed through its own fault (a
	// node's words): the comment of a job that fails for it.
	startErr string
	// request is the submission's request id (requestids.go), stored
	// with the job.
	request string
}

type part struct {
	exited      bool
	startFailed bool
	nodeFault   bool // the start failed because of the node (api.JobStateMsg.NodeFault)
	gpuFault    bool // ... because of a GPU fault it found (api.JobStateMsg.GPUFault)
	refused     bool // the node refused the job itself (api.JobStateMsg.Refusal): no retry
	leaseStop   bool // the node stopped it as its job lease ran out (api.StopLease)
	status      int
	err         string
}

// record encodes the job for the spool.
func (j *job) record() (spool.Record, error) {
	b, err := encodeRequestRecord(&j.Job, j.request)
	if err != nil {
		return spool.Record{}, err
	}
	r := spool.Record{ID: j.ID, Data: b}
	if j.State == api.StateFinished {
		r.Finished = j.EndTime
	}
	return r, nil
}

// decodeJob reads a spool record.
func decodeJob(r spool.Record) (*job, error) {
	aj, request, err := decodeRequestRecord(r.ID, r.Data)
	if err != nil {
		return nil, err
	}
	return &job{Job: aj, request: request}, nil
}

func (j *job) history(now time.Time, what string) {
	j.History = append(j.History, api.HistoryEntry{Time: now, State: j.State, What: what})
	const maxHistory = 200
	if len(j.History) > maxHistory {
		// The first entry and the latest ones, in a new array: copies of
		// the record handed out (a qstat -f answer being written) keep
		// theirs unchanged.
		h := make([]api.HistoryEntry, 0, maxHistory+1)
		j.History = append(append(h, j.History[0]), j.History[len(j.History)-maxHistory+1:]...)
	}
}

func (j *job) finished() bool { return j.State == api.StateFinished }

func (j *job) running() bool { return j.State == api.StateRunning || j.State == api.StateExiting }

// schedJob is the job as the scheduling core sees it.
func (j *job) schedJob(cluster string) (sched.Job, error) {
	sj := sched.Job{
		ID:            sched.JobID(j.ID),
		Share:         j.Share,
		User:          j.Owner.User,
		Priority:      j.Priority,
		Order:         j.PBSPriority,
		Seq:           j.Seq,
		Place:         j.QueuePlace,
		Submit:        j.SubmitTime,
		Nodes:         max(j.Resources.Nodes, 1),
		GPUsPerNode:   j.Resources.GPUsPerNode,
		CPUsPerNode:   j.Resources.CPUsPerNode,
		MemPerNode:    j.Resources.MemPerNode,
		Walltime:      j.Resources.Walltime,
		Grace:         schedGrace(j.Grace),
		Image:         j.Image,
		Labels:        j.Resources.Labels,
		Exclusive:     j.Resources.Exclusive,
		NotBefore:     j.NotBefore,
		Preemptions:   j.Preemptions,
		NodeFailures:  j.NodeFailures,
		StartFailures: j.StartFailures,
		Hold:          holdBits(j.Hold),
		PreferNode:    j.CheckpointNode,
		Interactive:   j.Interactive,
		Topology:      topologyRequest(j.Resources),
	}
	for _, d := range j.Deps {
		sj.Deps = append(sj.Deps, sched.Dep{Type: d.Type, On: sched.JobID(d.On)})
	}
	if !j.ArrayIndices.IsZero() {
		sj.Array = &sched.Array{Indices: j.ArrayIndices.Indices(), MaxRunning: j.ArrayMax}
	}
	return sj, nil
}

// holdBits maps PBS hold letters to the core's bits.
func holdBits(h string) sched.Hold {
	var b sched.Hold
	if strings.Contains(h, "u") {
		b |= sched.HoldUser
	}
	if strings.Contains(h, "o") {
		b |= sched.HoldAdmin
	}
	if strings.Contains(h, "s") {
		b |= sched.HoldSystem
	}
	return b
}

func holdLetters(b sched.Hold) string {
	var s string
	if b&sched.HoldUser != 0 {
		s += "u"
	}
	if b&sched.HoldAdmin != 0 {
		s += "o"
	}
	if b&sched.HoldSystem != 0 {
		s += "s"
	}
	return s
}

// pendingState is the PBS letter for a pending job with this reason.
func pendingState(j *job, r sched.Reason) api.State {
	switch {
	case j.Hold != "" || r == sched.ReasonHeld || r.NeverFits():
		return api.StateHeld
	case r == sched.ReasonBeginTime:
		return api.StateWaiting
	case j.arrayBegun():
		return api.StateArray
	}
	return api.StateQueued
}

// arrayBegun says whether j is an array job one of whose subjobs has
// started: PBS's state B ("begun") from then until the array is done, while
// its other subjobs wait (it is not held). The first start sets StartTime
// (persisted), so a restarted controller shows B too, whatever the core
// says of the array's remaining indices (NodesDown until its nodes are
// back).
func (j *job) arrayBegun() bool {
	return !j.ArrayIndices.IsZero() && j.ArrayParent == "" && !j.StartTime.IsZero() && !j.finished()
}

// exitStatus combines the parts' statuses: the first node's, unless it
// succeeded and another node failed.
func (j *job) exitStatus() int {
	st := 0
	for i, a := range j.Allocs {
		p := j.parts[a.Node]
		if p == nil {
			continue
		}
		if i == 0 {
			st = p.status
		} else if st == 0 && p.status != 0 {
			st = p.status
		}
	}
	return st
}
