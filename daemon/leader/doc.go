// Package leader elects one sharqctld among two or three on an etcd cluster
// and fences everything the leader writes.
//
// Each controller holds an etcd session (a lease with a TTL, 5 s by
// default) and campaigns with go.etcd.io/etcd/client/v3/concurrency's
// Election under PREFIX/: its candidate key carries the session's lease,
// and the oldest key (lowest create revision) leads. The leader's epoch is
// that create revision: it only grows from one leader to the next.
//
// The fence ([Leader.Fence]) is two comparisons every write transaction
// carries: the candidate key still exists with its create revision (the
// session has not expired), and no key under the prefix is older. The
// second one matters: a candidate that is still waiting for its turn passes
// the first test too.
//
// A leader whose session ends (lease expired, e.g. after a pause longer
// than the TTL, or revoked) sees Done closed; [Leader.Valid] tells, from
// the local monotonic clock, whether the lease can still be alive, so that
// a leader that wakes from a pause sends no order before it knows.
package leader
