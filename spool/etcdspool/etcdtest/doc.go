// Package etcdtest runs real etcd members for tests: an in-process member
// (go.etcd.io/etcd/server/v3/embed) on 127.0.0.1 ports, and the command
// line of a member process so that tests can run a cluster of separate
// processes and kill -9 them. Only tests import it, so the etcd server's
// dependencies stay out of sharq's binaries.
package etcdtest
