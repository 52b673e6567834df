// Package munged runs a private munged for tests: its own key, socket,
// pid, seed and log files under one directory, in the foreground as a
// child of the test, so that several "hosts" on one machine each have
// their own (with one key, or deliberately another).
package munged
