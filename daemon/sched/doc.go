// Package sched is sharq's scheduling core: a pure, deterministic state
// machine. It holds the partitions, nodes, shares and every pending or
// running job; drivers (the controller sharqctld and the simulator
// sharq-sim) feed it events with Apply and call Schedule(now) to get a Plan:
// jobs to start with exact node and GPU indices, jobs to preempt, jobs
// requeued or failed, and a typed reason for each job that stays pending.
//
// The package does no I/O, starts no goroutines, never reads the clock (time
// is passed in) and uses no randomness: the same events give the same plan.
// A decision is applied to the core's own state as it is made (a started job
// holds its GPUs at once; a preempted job holds them until the driver reports
// its exit), so the driver only carries the plan out and reports back.
//
// Where the rules live: pass.go (order of a pass, quota classes, the
// reservation that keeps later jobs from delaying a blocked one, reasons),
// reservation.go (walltime reservations, EASY backfill and estimates, when
// Config.Backfill is on; resvindex.go keeps, between passes, the nodes'
// expected free times per GPU count, so a reservation does not walk every
// node), headresv.go (a share's first over-headroom job
// reserves in phase 1, binding its share's later jobs; under fair share
// the borrower reservation sticks to its job), headclaim.go (without such
// a reservation it claims its share's quota headroom against the share's
// lower-priority jobs), borrowresv.go (a few more
// blocked borrowers reserve, each around the ones before it), claim.go (a
// blocked borrower's claim on the lendable GPUs stands only while it can
// be met within claimWindow),
// preempt.go (cross-share reclaim, in-share preemption, placement-aware
// minimal victim sets, nominations), placement.go (tight fit, adjacent
// GPUs; every job counts at least one CPU on a node that accounts CPUs, see
// state.go), exclusive.go (place=excl: alone on idle nodes, charged
// every GPU of its nodes, preempts only to clear whole nodes), neverfits.go, deps.go (dependency outcomes; DependencyOutcome
// restores them after a restart, Forgotten drops those the driver purged), arrays.go, fairshare.go (decayed usage;
// under Config.FairShare the borrowers of a partition go one job at a time
// by lowest (decayed borrowed GPU-seconds + GPUs borrowed now × min(H/ln 2, 3 days) -
// the next borrower's GPUs × its wait) / weight instead of submission order; Usage and UsageRestored carry the
// usage over a restart), fairpreempt.go (Config.FairPreemption: a
// borrower that fair share serves first may preempt other shares' jobs
// wholly beyond their quota, kind FairShare, only from a share that still
// borrows at least as much per weight as the preemptor's once it starts,
// after FairPreemptionAfter), userlimits.go (max running jobs and GPUs per user
// in a share) and usercursor.go (a share's queue per user, merged in a
// pass by queue order or by the users' fair keys); heap.go is the one
// priority queue (begin times, a pass's shares, a share's users). Nodes
// start down; NodeUp makes them usable. A pass looks at every share of a partition after a capacity
// change and only at changed shares otherwise, and at most a bounded number
// of blocked jobs per share (the rest wait with ReasonPriority), so a pass
// costs what changed, not the number of pending jobs. Retry limits are
// decided here too (preemptions, node failures, StartFailed), and NextWake
// tells a driver when the next begin time comes (or a fair preemption
// refused for time may be allowed), so it need not poll.
package sched
