// Package conns is what every listener of the daemons shares against
// connection floods: an accept loop that backs off and keeps serving when
// accept fails for want of file descriptors or memory (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) or because a peer gave up (ECONNABORTED); a limiter
// that caps the connections one identity (a uid) holds at once; and
// Pending, the bounded slots of connections that have not authenticated
// yet, where a new connection closes the oldest silent one rather than
// being refused, so that no one holding idle connections locks others out.
package conns
