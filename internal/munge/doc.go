// Package munge is a client of munged, the daemon of the MUNGE
// authentication service (https://dun.github.io/munge/), in Go: Encode
// asks the local munged for a credential that carries a payload and the
// caller's uid and gid; Decode asks a munged (with the same key, on any
// host) to check one and returns who made it. munged refuses a credential
// it has already decoded (replay), one past its time-to-live, and one made
// with another key; each cause is a sentinel error (ErrReplayed,
// ErrExpired, ErrInvalid, ...) that errors.Is finds.
//
// It speaks munged's own Unix-socket protocol (wire.go: the messages of
// MUNGE 0.5.x, version 4) with libmunge's timeouts and retries (xfer.go),
// instead of linking libmunge with cgo: no Go module for MUNGE is to be
// had, and without cgo the client commands are static binaries by
// themselves (they also run in job containers whose image has no C
// library) and start faster. munged learns who the client is from the
// socket (SO_PEERCRED), so nothing of the caller's is sent but the
// request. What comes back is bounded (maxReply) and parsed field by
// field (fuzzed); the socket is munged's, so a well-formed answer is
// trusted as munged's word.
package munge
