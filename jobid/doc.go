// Package jobid is the one parser and printer of job ids, array index
// ranges and dependency specs. Every other package (the spool's keys, the
// controller's lookups, the scheduling core's subjob ids, the commands)
// goes through it, so that one set of rules and one set of bounds hold
// everywhere:
//
//   - A canonical id (ID, Parse) is NUM, NUM[] (an array) or NUM[IDX] (a
//     subjob), optionally followed by .SERVER; NUM and IDX are decimal
//     without leading zeros, NUM below 2^63, the whole at most MaxIDLen bytes.
//   - An array's indices (Range, ParseRange, ParseArray) are
//     START[-END[:STEP]] with every index at most MaxIndex and at most
//     MaxArraySize indices; counts are computed without overflow.
//   - What a user types to qdel or qstat (Ref, ParseRef) may select
//     subjobs by ranges and lists, 12[1,4,7-9:2]; a selection is only ever
//     walked within an array's real indices (Ref.Each), so its size cannot
//     make a request expensive.
//   - Dependencies (DepType, ParseDepend) are type:id[:id...] lists.
//
// The package is pure (no I/O) and fuzzed (fuzz_test.go).
package jobid
