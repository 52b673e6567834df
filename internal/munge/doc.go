// Package munge binds libmunge, the client library of the MUNGE
// authentication service (https://dun.github.io/munge/), with cgo: Encode
// asks the local munged for a credential that carries a payload and the
// caller's uid and gid; Decode asks a munged (with the same key, on any
// host) to check one and returns who made it. munged refuses a credential
// it has already decoded (replay), one past its time-to-live, and one made
// with another key; each cause is a sentinel error (ErrReplayed,
// ErrExpired, ErrInvalid, ...) that errors.Is finds.
//
// Only munge_encode and munge_decode are bound, through two small C
// wrappers (munge_ctx_set is variadic, which cgo cannot call). The binary
// links libmunge; the client commands link it statically (see Makefile)
// so that they also run in job containers whose image has no C library.
package munge
