// Package binread reads the fields of a binary message held in a byte
// slice: fixed-size integers in the message's byte order, and runs of
// bytes, each checked against what is left. The first failure sticks: the
// reads after it return zero values, so a decoder reads every field and
// checks once, at the end (Reader.Done). The decoders of munged's replies
// (internal/munge) and of the spool's log entries (spool) use it.
package binread
