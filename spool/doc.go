// Package spool is sharqctld's crash-safe job store.
//
// The controller keeps every job as an opaque [Record] (its own versioned
// JSON, daemon/ctld/record.go) in a [Spool]. [Bolt] is the on-disk implementation: one bbolt file,
// spool_dir/jobs.db, held under an exclusive flock so that two controllers
// cannot share a spool; [Memory] is the in-memory one for sharq-sim and tests.
// Both pass the conformance suite in package spooltest.
//
// Durability: Put, Delete, Purge and NextIDs commit one transaction each and
// (unless [Options.NoSync]) fsync before they return, so after kill -9 every
// acknowledged write is present and no job number from NextIDs is handed out
// again. Put is the unit of group commit: batch many submissions into one Put.
//
// Order: records are stored under [SortKey], derived from the id, so Scan
// visits jobs in numeric order ("2.lab" before "10.lab"), an array parent
// "10[].lab" directly followed by its subjobs "10[0].lab", "10[1].lab", ...
// Active and finished records are interleaved in that one order; callers tell
// them apart by Record.Finished. Scan is not a snapshot: it reads in pages and
// calls fn with no lock or transaction held, so fn may write to the spool.
//
// History: a record whose Finished time is set is indexed by that time;
// Purge(before) drops finished records older than before (qstat -x history).
//
// The file carries a schema version; Open refuses a spool written by a newer
// schema ([ErrSchema]).
package spool
