// Package secret reads the cluster's shared node secret (cluster.secret_file)
// for sharqctld and sharqd alike: one reader, so both daemons accept and
// refuse the same files (a regular file owned by root, no access for group
// or other, at most 4 KiB, not blank) and trim it the same way. KeyPair
// loads the TLS certificates of both daemons (tls_cert, tls_key, and the
// etcd client's) with the same kind of check of the key file: no access for
// other users (keypair.go).
package secret
