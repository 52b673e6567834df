// Package spool is sharqctld's crash-safe job store.
//
// The controller keeps every job as an opaque [Record] (its own versioned
// JSON, daemon/ctld/record.go) in a [Spool]. [Bolt] is the on-disk
// implementation: a bbolt file, spool_dir/jobs.db, held under an exclusive
// flock so that two controllers cannot share a spool, with a write-ahead log
// in front of it, spool_dir/jobs.wal; [Memory] is the in-memory one for
// sharq-sim and tests. Both pass the conformance suite in package spooltest.
//
// Durability: Put, Delete, SetState and NextIDs each append one checksummed
// frame to jobs.wal and fdatasync it (unless [Options.NoSync]) before they
// return, so after kill -9 or a power loss every acknowledged write is
// present and no job number from NextIDs is handed out again. Put is the unit
// of group commit: batch many submissions into one Put. This is etcd's model:
// a bbolt commit costs two syncs (its pages, then its meta page) where the
// log costs one, into a file filled with zeros ahead of the frames
// (walfile.go) so that the sync has no size change to journal.
//
// Checkpoints: logged writes live in an in-memory overlay that Get, Scan and
// State read first. A checkpoint commits the overlay into jobs.db in one
// ordinary synced bbolt transaction, which also records the LSN of the last
// log entry it holds, and then starts the log over in the same file. It runs
// when the overlay holds more than 2048 records and state keys or 8 MiB,
// when the log would pass 64 MiB, before Purge (which works on jobs.db), on
// each page of a Scan while the overlay has records (so Scan reads jobs.db
// as before), and on Close. A Put or Delete too large for one 4 MiB frame is
// committed to jobs.db directly, after a checkpoint.
//
// Recovery: Open replays the log entries jobs.db lacks (a kill during a
// checkpoint leaves jobs.db with none or all of them: bbolt's commit is
// atomic), drops a torn last entry (a write cut short, never acknowledged)
// with a warning, and fails with [ErrCorrupt], naming the file and offset,
// when an entry is damaged but a later one is whole; a log of an unknown
// format fails with [ErrSchema]. jobs.db and jobs.wal belong together: back
// up both, from a stopped controller (Close checkpoints, leaving the log with
// nothing to replay). The log's format is described in wal.go.
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
