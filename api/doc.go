// Package api is sharq's versioned wire protocol: the job record that the
// controller keeps in its spool and shows to users, the requests that qsub,
// qstat, qdel and sharqctl send over the controller's Unix socket, and the
// messages between sharqctld and the node daemons. Every message is one JSON
// object on one line, at most MaxMessage bytes.
package api
