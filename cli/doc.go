// Package cli is the logic of the PBS-style user commands (qsub, qstat,
// qdel, qhold, qrls, qalter, qexec, qselect, pbsnodes, qsig, qrerun, qmove,
// qorder, tracejob) and of the admin command sharqctl. Each command
// is a function of its arguments and a *Sys (standard streams, environment,
// working directory, clock, and a Caller for the controller round-trip), so
// its parsing and output are tested without a socket; the mains under cmd/
// wire Sys to the real process and to client.Call.
//
// The PBS parsers (sizes, walltimes, -l resource lists including select= and
// Torque's nodes=, #PBS directives, -a times, -W depend=, -J ranges) live in
// their own files and are fuzzed.
package cli
