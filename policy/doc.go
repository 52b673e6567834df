// Package policy is the vocabulary the cluster configuration (conf) and
// the scheduling core (daemon/sched) share: a share's strategy for its
// idle GPUs, the "no limit" value, and the bounds both check. It imports
// nothing of sharq's, so that conf, and with it every client command,
// needs no part of the core.
package policy
