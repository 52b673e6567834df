// Package localcluster brings up a whole sharq cluster on one machine, for
// trying sharq out (make up) and for the demo (make demo): a private
// containerd (unless one already answers at the configured socket), the
// demo image built from the host's static busybox, fake GPUs that are real
// device files, the shared secret, sharqctld and one sharqd per configured
// node as child processes, and an unprivileged user to submit jobs as.
//
// Up runs in the foreground until its context ends, then stops everything
// it started and removes what the cluster left behind (containers, mounts,
// sockets, spool): only the logs and a copy of the client commands stay.
// A lock file makes a second Up fail with ErrAlreadyRunning; a run that was
// killed is cleaned up by the next one.
package localcluster
