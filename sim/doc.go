// Package sim is sharq-sim's engine: a discrete-event simulator that replays
// a job trace through the very scheduling core the controller uses
// (sharq/daemon/sched) on a virtual clock.
//
// DecodeTrace reads the CSV trace (gzipped or not), DecodeActions an
// optional CSV of actions at given times (cancel, hold, release, prio, node
// down, up, drain, resume: what a trace of jobs cannot say), Run drives one
// simulation and returns a Result (per-share usage, waits, preemptions and
// lost work), optionally writing every event as a JSON line; Compare runs
// the same trace under three strategy variants concurrently; WriteReport,
// WriteCompare and SavePlot present the results; ImportITP converts the
// Microsoft ITP cluster trace into the trace format.
//
// The simulator holds no scheduling logic of its own: at each distinct event
// time it applies the events due (submits, exits of finished jobs, exits of
// preempted or cancelled jobs after their grace time, actions), calls
// Schedule once, and carries
// the plan out by scheduling the matching future events (a binary heap
// ordered by time, kind and insertion). Jobs submitted at the same time go
// in file order (Seq is the trace line). A preempted job stops working at
// SIGTERM and holds its GPUs for its grace time; it keeps the work saved by
// then (all of it, or with checkpoint_s only up to its last checkpoint) and
// is requeued with the rest. The core runs single-threaded per simulation;
// Compare runs one simulation per goroutine.
package sim
