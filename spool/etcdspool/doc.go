// Package etcdspool is the spool on an etcd cluster: the job store of
// sharqctld when two or three controllers share one state (high
// availability).
//
// Layout under the configured prefix P (e.g. "/sharq/lab/"):
//
//	P meta/schema     schema version (8 bytes, big endian)
//	P meta/next       next job number NextIDs hands out (8 bytes, big endian)
//	P jobs/HEX        one record per job: HEX is spool.SortKey in hex (so etcd's
//	                  byte order is numeric job order), the value the record's
//	                  spool value (finish time header + data)
//	P fin/HEX         finish time of a finished record (the Purge index)
//	P state/KEY       small controller state (SetState)
//
// Limits. etcd takes at most 128 operations per transaction and 1.5 MiB per
// request by default. Put splits a group commit into chunks that respect both
// ([Options.MaxTxnOps], [Options.MaxRequestBytes]); each chunk is one fenced
// transaction, and Put returns nil only when every chunk committed. A Put is
// therefore atomic per chunk, not as a whole: after a crash in the middle of
// a Put some of its records may be stored, none of which was acknowledged.
// A record larger than spool.MaxRecordSize fails with spool.ErrTooLarge
// before anything is written.
//
// Fencing. [Options.Fence] returns comparisons (see package
// daemon/leader) that every write transaction carries; when they do not hold
// (this controller is no longer the leader) nothing is written and the call
// fails with an error wrapping [ErrFenced].
//
// Failures. Every call runs under [Options.Timeout]. A write whose member
// died under it (its connection broke, or its proposal was lost with the
// raft leader) is sent again within that timeout, each try bounded by half
// of it, so losing one member of three fails no write; the client given
// every member's endpoint reaches the others. When etcd refuses the
// write (database space exceeded: the NOSPACE alarm) or does not answer in
// time (no quorum), the call fails with an error wrapping
// spool.ErrUnavailable that says why; nothing it wrote was acknowledged.
// (Such a write may still be stored: etcd applies the write that crosses
// the quota and answers NOSPACE, and a timed-out write may commit later.
// Like a crash after a commit, this stores what nobody was told about;
// it never loses what was acknowledged.)
//
// Operations: etcd keeps every revision until it is compacted. Run etcd with
// --auto-compaction-mode=periodic --auto-compaction-retention=1h and defrag
// members now and then; the backend quota (--quota-backend-bytes) defaults to
// 2 GiB, about 400,000 jobs of 4 KiB with history: beyond it etcd raises the
// NOSPACE alarm and refuses every write until it is compacted, defragmented
// and the alarm disarmed (etcdctl alarm disarm).
package etcdspool
