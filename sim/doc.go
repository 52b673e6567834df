// Package sim is sharq-sim's engine: a discrete-event simulator that replays
// a job trace through the very scheduling core the controller uses
// (sharq/daemon/sched) on a virtual clock.
//
// DecodeTrace reads the CSV trace (gzipped or not), DecodeActions an
// optional CSV of actions at given times (cancel, hold, release, prio, node
// down, up, drain, resume: what a trace of jobs cannot say), Run drives one
// simulation and returns a Result (per-share usage, waits, preemptions and
// lost work, slowdowns, waits by job size, fairness among borrowers),
// optionally writing every event as a JSON line; Compare runs the same
// trace under the configurations of Variants concurrently; WriteReport,
// WriteCompare and SavePlot present the results; ReadITP converts the
// Microsoft ITP cluster trace into the trace format, and AddWalltimes
// gives its jobs the walltimes users would have asked for.
//
// A trace row's walltime_s is the job's walltime as qsub -l walltime gives
// it (the core plans reservations and backfill with it; empty means the
// partition's default_walltime); it may not be below duration_s, since the
// simulator does not kill jobs at their walltime. import-itp fills it with
// a model of real users' estimates (see EstimateWalltime): the run time
// times a headroom factor uniform in [1, 2), drawn from a hash of the job
// id and --walltime-seed, rounded up to the next of 1, 2, 4, 8, 24, 48 and
// 168 hours (whole weeks above). Estimates are modal (a few round values
// cover most jobs; Tsafrir, Etsion and Feitelson, "Modeling User Runtime
// Estimates", JSSPP 2005) and generous (run time over estimate spreads
// over (0, 1]; Mu'alem and Feitelson, IEEE TPDS 2001), and so are these:
// on the ITP trace the median job uses 44% of its walltime (mean 46%),
// and 8, 4 and 1 hours are the commonest walltimes.
//
// The figures beside per-share usage: slowdown, (wait + run) / run of each
// finished job (submission to end over run time); p95 first wait by job
// size (1, 2-8, 9-32, more than 32 GPUs); Jain's fairness index over the
// borrowing shares' borrowed GPU-hours divided by their weight, over the
// whole run and per day among the shares that wanted to borrow for at
// least half of the day
// (fairWindows says why both); and the utilization of useful work as a
// fraction of two work-conserving bounds of the trace (Bound): the one
// within the configuration's share caps (ShareCapBound: each share's work
// fluid on its partition's GPUs, never more at once than the core lets the
// share hold, quota or quota + borrow limit, nor the partition's
// non-RESERVE shares more than their pool; the best any schedule under this
// configuration can do), and the one on the cluster's GPUs alone
// (WorkConservingBound: a fluid single queue at the cluster's capacity).
// Both keep every job from ending before its submission plus its run time
// and relax everything else (node shapes, preemption, reservations, order,
// per-user limits).
//
// The simulator holds no scheduling logic of its own: at each distinct event
// time it applies the events due (submits, exits of finished jobs, exits of
// preempted or cancelled jobs after their grace time, actions), calls
// Schedule once, and carries
// the plan out by scheduling the matching future events (a binary heap
// ordered by time, kind and insertion). Jobs submitted at the same time go
// in file order (a job's Seq, its submission order for the core, is its
// rank by submission time, then trace line). A preempted job stops working at
// SIGTERM and holds its GPUs for its grace time; it keeps the work saved by
// then (all of it, or with checkpoint_s only up to its last checkpoint) and
// is requeued with the rest. The core runs single-threaded per simulation;
// Compare runs as many simulations at once as there are cores, one per
// goroutine, the costliest first (Variant.Cost).
package sim
