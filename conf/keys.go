package conf

import "slices"

// keys are the keys of each table the loader reads, by table name ("" is
// the file's top level, "partition", "node" and "share" each block of
// those arrays); any other key is an error (unknown key).
var keys = map[string][]string{
	"":           {"cluster", "etcd", "runtime", "accounting", "scheduler", "partition", "node", "share", "topology", "domain"},
	"cluster":    {"name", "spool_dir", "socket", "listen", "controller", "admins", "secret_file", "tls_cert", "tls_key", "tls_ca", "heartbeat_interval", "node_timeout", "job_lease", "history", "metrics", "checkpoint_root", "default_share", "spool", "controllers", "client_listen", "servers", "client_tls", "munge_socket", "mounts", "session_listen", "max_queued_jobs_per_user", "max_job_bytes_per_user"},
	"etcd":       {"endpoints", "prefix", "session_ttl", "timeout", "tls_cert", "tls_key", "tls_ca", "max_txn_ops", "max_request_bytes"},
	"runtime":    {"containerd_socket", "namespace", "client_bin_dir", "health_check", "health_check_interval", "gpu_sample_interval"},
	"accounting": {"backend", "path", "dsn", "retention", "sample_interval", "users_see_all"},
	"scheduler":  {"fair_share", "usage_half_life", "backfill", "fair_preemption", "fair_preemption_after"},
	"partition":  {"name", "nodes", "default_image", "preempt_grace", "max_preempt_grace", "max_walltime", "default_walltime", "never_fits_fail_after", "preemption_retries", "node_failure_retries", "start_failure_retries", "pids_limit", "allow_user_namespaces", "network", "mounts", "host_image", "checkpoints", "interactive", "max_interactive_walltime", "default_ncpus", "default_mem_per_gpu", "default_mem_per_cpu", "topology", "default_topology_level", "idle_threshold", "idle_after", "idle_action", "idle_action_in_quota"},
	"node":       {"names", "gpus", "cpus", "memory", "gpu_devices", "extra_devices", "checkpoint_root", "labels", "nvlink"},
	"topology":   {"name", "levels"},
	"domain":     {"topology", "level", "name", "nodes"},
	"share":      {"name", "partition", "gpus", "strategy", "borrow_limit", "in_share_preemption", "users", "state", "priority_default", "fair_weight", "fair_share_users", "max_running_jobs_per_user", "max_gpus_per_user", "max_queued_jobs_per_user"},
}

// Keys returns the keys of each table the loader knows, by table name (""
// for the top level): what the man page sharq.toml(5) must document
// (internal/tools/mangen checks it does).
func Keys() map[string][]string {
	out := make(map[string][]string, len(keys))
	for t, ks := range keys {
		out[t] = slices.Clone(ks)
	}
	return out
}
