// Package conf loads and validates sharq's cluster configuration, a TOML
// file (see contrib/examples/cluster.toml) with a [cluster] and a [runtime]
// table and [[partition]], [[node]] and [[share]] blocks.
//
// Load and Parse fill every optional key with its default, expand hostlists
// ("gpu[01-16]") into one Node per name, and check the whole file at once:
// an invalid file gives Problems, one Problem per mistake, each with the
// file, line and column of the offending key. Config.Sched converts the
// result for the pure scheduling core (sharq/daemon/sched).
//
// The package also holds the small parsers other parts share: hostlists
// (ExpandHostlist, CompressHostlist), sizes in PBS style (ParseSize,
// FormatSize) and durations (ParseDuration).
package conf
