// Package noded is the node daemon, sharqd: it connects out to the
// controller (TCP, mutual TLS when the configuration names certificates),
// authenticates with the cluster's shared secret, reports the node's
// inventory, heartbeats, and runs the controller's start, stop and remove
// orders as containers through a runtime.Runtime.
//
// Containers outlive the daemon: a restarted sharqd (even after kill -9)
// re-adopts its node's containers from the runtime, resumes waiting for
// their exits and re-arms their walltime timers and interrupted stops from a
// small state file per job under the node's state directory. The hello sent
// on every (re)connection lists every job container of the node, running or
// exited and not yet removed, so the controller can reconcile, and lists
// as running the runs whose start order it has taken and not finished
// (starting.go): the runtime cannot tell a container being made from one
// that ended. A container is removed only when the controller says it has
// recorded the exit (api.MsgRemove).
//
// It also serves interactive sessions (qsub -I, qexec) on its session
// port (sessions.go): a client presenting a one-time token the controller
// sent (MsgSession), and for remote clients a MUNGE credential binding it,
// gets a process in the job's container through a runtime.Execer. An
// interactive job's container runs a holder that exits with the status of
// the job's own session (interactive.go).
//
// Run is the whole daemon; cmd/sharqd wires the configuration, containerd
// and signals around it.
package noded
