// Package acct is sharq's job history: one [Record] per finished job
// (who, where, what it asked for and used, how it ended, and its GPU-seconds
// split into owned, borrowed, lost to preemption and held during grace) and
// periodic [ShareSample]s of every share's quota, use, borrowing and lending,
// which the usage reports and plots integrate over time.
//
// [Store] is the one interface, with two implementations over database/sql
// that share their SQL: [OpenSQLite] (the embedded default, a file next to
// the spool; modernc.org/sqlite, pure Go) and [OpenPostgres] (jackc/pgx, for
// sites with several controllers or that want SQL over their history). Both
// pass the conformance suite in package accttest.
//
// Writes are idempotent: recording a job again replaces its row, so a
// controller that replays records after a crash never duplicates one.
//
// The schema is versioned (table sharq_schema); Open applies the missing
// migrations in one transaction and refuses a database written by a newer
// schema ([ErrSchema]). testdata holds every old version (a SQLite file of
// version 1, the DDL of version 2 with a few rows), which the migration
// tests open on both backends.
//
// A record's [Detail] (script, environment, dependencies, event log and
// submit options, so that qstat -x shows a purged job whole) is bounded as
// the controller's job record is ([MaxDetailLen] and the counts beside it)
// and read only when a [JobFilter] asks for it.
package acct
