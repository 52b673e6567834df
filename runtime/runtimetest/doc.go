// Package runtimetest is the conformance suite every runtime.Runtime must
// pass: exit codes, stdout/stderr files (separate, joined, appended across
// runs), Start of an existing job (ErrExists), Stop with grace (trapped
// TERM exits with its own code, untrapped TERM gives 256+15, ignored TERM
// gives 256+9 after grace), unknown jobs (ErrNotFound), List before and
// after exit, Remove (ErrRunning while running), Wait's context, OOMKilled
// under a memory limit, and Health. A runtime that cannot apply memory
// limits where it runs declares it (Env.NoMemoryLimits) and is checked to
// refuse them instead; nothing is skipped.
package runtimetest
