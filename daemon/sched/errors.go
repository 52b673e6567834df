package sched

import "errors"

// Sentinel errors returned (wrapped, with the job or node id) by New and
// Apply. An event that returns an error changes nothing.
var (
	// ErrUnknownJob: the event names a job the core does not hold (or a
	// dependency names a job it has never seen).
	ErrUnknownJob = errors.New("unknown job")
	// ErrUnknownNode: the event names a node that is not in the configuration.
	ErrUnknownNode = errors.New("unknown node")
	// ErrDuplicateJob: a job with that id is already known.
	ErrDuplicateJob = errors.New("duplicate job")
	// ErrInvalid: the event or configuration is malformed or not allowed in
	// the job's current state.
	ErrInvalid = errors.New("invalid")
)
