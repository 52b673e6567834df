// Package runtimetest is the conformance suite every runtime.Runtime must
// pass: exit codes, stdout/stderr files (separate, joined, appended across
// runs), Start of an existing job (ErrExists), Stop with grace (trapped
// TERM exits with its own code, untrapped TERM gives 256+15, ignored TERM
// gives 256+9 after grace), unknown jobs (ErrNotFound), List before and
// after exit, Remove (ErrRunning while running) and Wait's context.
package runtimetest
