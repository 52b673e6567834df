// Package secret reads the cluster's shared node secret (cluster.secret_file)
// for sharqctld and sharqd alike: one reader, so both daemons accept and
// refuse the same files (a regular file owned by root, no access for group
// or other, at most 4 KiB, not blank) and trim it the same way.
package secret
