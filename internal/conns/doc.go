// Package conns is what every listener of the daemons shares against
// connection floods: an accept loop that backs off and keeps serving when
// accept fails for want of file descriptors or memory (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) or because a peer gave up (ECONNABORTED), and a limiter
// that caps the connections one identity (a uid, a remote address, "not yet
// authenticated") holds at once.
package conns
