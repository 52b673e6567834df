// Package ctld is the controller, sharqctld. One goroutine (the loop) owns
// every job, the configuration and the scheduling core (daemon/sched). Client
// requests (Unix socket, identified by SO_PEERCRED) and node daemon messages
// (TCP, shared secret) reach the loop as operations; the loop applies a batch
// of them, runs a scheduling pass, writes every changed job to the spool in
// one synced transaction, and only then answers the clients and sends start
// and stop orders to the nodes. A crash at any point therefore loses no
// acknowledged job and starts no job twice: on restart the spool is replayed
// into a fresh core and the nodes' reports are reconciled against it.
//
// Every request is hostile until checked. A panic while handling one
// request or node message is recovered (recover.go): that request fails
// with an internal error, the turn's acknowledged changes are written, and
// the in-memory state is rebuilt from the spool, so a bug reachable by one
// user neither stops the controller nor leaves unwritten state behind.
package ctld
