package sim

import (
	"bufio"
	"encoding/json"
	"io"
	"time"
)

// Record is one line of the --out event log. T is the virtual time in
// seconds since the trace's origin, written exactly. Which fields are set
// depends on Event:
//
//	submit   job, share
//	start    job, share, and node+gpus for a one-node job or nodes (one
//	         {"node","gpus"} object per node) for a multi-node job
//	preempt  job, share, by (the job it makes room for), kind (cross_share,
//	         in_share or fair_share), lost_s (seconds of work thrown away, per GPU)
//	exit     job, share: a preempted job has gone, its GPUs are free
//	requeue  job, share, remaining_s (work still to do)
//	finish   job, share
//	fail     job, share, reason
//	hold     job, share, reason: the job stays pending for this reason
//	         (written each time the core's reason for it changes)
//	action   kind (cancel, hold, release, prio, down, up, drain, resume),
//	         job and share or node; reason "refused: ..." when the core
//	         refused it (e.g. hold of a job that is not pending)
//
// Within one time, lines follow the simulator's order: the events applied
// (finishes' and preempted or cancelled jobs' exits, then submissions, then
// actions, as "exit", "submit" and "action"), then the plan: fail, requeue, finish, preempt, start, hold.
// A victim with no grace time exits at the time it is preempted, in a
// second pass at that same time.
type Record struct {
	T          json.Number `json:"t"`
	Event      string      `json:"event"`
	Job        string      `json:"job,omitempty"` // empty only for an action on a node
	Share      string      `json:"share,omitempty"`
	Node       string      `json:"node,omitempty"`
	GPUs       []int       `json:"gpus,omitempty"`
	Nodes      []NodeGPUs  `json:"nodes,omitempty"`
	By         string      `json:"by,omitempty"`
	Kind       string      `json:"kind,omitempty"`
	Reason     string      `json:"reason,omitempty"`
	LostS      json.Number `json:"lost_s,omitempty"`
	RemainingS json.Number `json:"remaining_s,omitempty"`
}

// NodeGPUs is one node's part of a multi-node start.
type NodeGPUs struct {
	Node string `json:"node"`
	GPUs []int  `json:"gpus"`
}

// Event names.
const (
	EventSubmit  = "submit"
	EventStart   = "start"
	EventPreempt = "preempt"
	EventExit    = "exit"
	EventRequeue = "requeue"
	EventFinish  = "finish"
	EventFail    = "fail"
	EventHold    = "hold"
	EventAction  = "action"
)

func seconds(d time.Duration) json.Number { return json.Number(FormatSeconds(d)) }

// recordWriter writes records as JSON lines; a nil writer drops them.
type recordWriter struct {
	bw  *bufio.Writer
	enc *json.Encoder
	err error
}

func newRecordWriter(w io.Writer) *recordWriter {
	if w == nil {
		return nil
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &recordWriter{bw: bw, enc: enc}
}

func (w *recordWriter) write(r *Record) {
	if w == nil || w.err != nil {
		return
	}
	w.err = w.enc.Encode(r)
}

func (w *recordWriter) flush() error {
	if w == nil {
		return nil
	}
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}
