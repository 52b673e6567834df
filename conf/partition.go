package conf

import (
	"time"

	"github.com/sharq-hpc/sharq/policy"
)

// partBlock is a [[partition]] block while the file is checked.
type partBlock struct {
	Partition
	t       *table
	nodesOK bool // its nodes list expanded cleanly
}

func (l *loader) partitions(ts []*table) []*partBlock {
	seen := map[string]*partBlock{}
	var out []*partBlock
	for _, t := range ts {
		p := &partBlock{t: t, Partition: Partition{
			PreemptGrace: DefaultPreemptGrace, PreemptionRetries: policy.Unlimited, NodeFailureRetries: policy.Unlimited,
			StartFailureRetries: DefaultStartFailureRetries,
			PidsLimit:           DefaultPidsLimit, Network: NetworkHost, Interactive: true,
		}}
		if name, ok := t.str("name"); ok {
			p.Name = name
			t.ctx = "partition " + quote(name)
			if first, dup := seen[name]; dup {
				t.errf("name", "defined twice (first at line %d)", first.t.line("name"))
			} else {
				seen[name] = p
			}
			if !validName(name) {
				t.errf("name", "%q is not a valid name (want 1 to 63 of [A-Za-z0-9_.-], starting with a letter or digit)", name)
			}
		} else if !t.has("name") {
			t.errAt("", "name is required")
		}

		if s, ok := t.str("nodes"); ok {
			p.Nodes, p.nodesOK = t.hostnames("nodes", s)
		} else if !t.has("nodes") {
			t.errAt("", "nodes is required (a hostlist such as \"gpu[01-16]\")")
		}
		p.DefaultImage = t.strDefault("default_image", "")
		if d, ok := t.duration("preempt_grace", p.PreemptGrace); ok {
			p.PreemptGrace = d
		}
		p.MaxPreemptGrace = max(DefaultMaxPreemptGrace, p.PreemptGrace)
		if d, ok := t.duration("max_preempt_grace", p.MaxPreemptGrace); ok {
			p.MaxPreemptGrace = d
			if d < p.PreemptGrace {
				t.errf("max_preempt_grace", "%v is below preempt_grace %v", d, p.PreemptGrace)
			}
		}
		if d, ok := t.duration("max_walltime", 0); ok {
			p.MaxWalltime = d
			if d > policy.MaxWalltime {
				t.errf("max_walltime", "%v is above %v", d, policy.MaxWalltime)
				p.MaxWalltime = 0
			}
		}
		p.DefaultWalltime = p.MaxWalltime
		if d, ok := t.duration("default_walltime", p.MaxWalltime); ok {
			p.DefaultWalltime = d
			switch {
			case d <= 0:
				t.errf("default_walltime", "must be positive (leave it out for max_walltime)")
			case p.MaxWalltime > 0 && d > p.MaxWalltime:
				t.errf("default_walltime", "%v is above max_walltime %v", d, p.MaxWalltime)
			case d > policy.MaxWalltime:
				t.errf("default_walltime", "%v is above %v", d, policy.MaxWalltime)
			}
		}
		if d, ok := t.duration("never_fits_fail_after", 0); ok {
			if d < 0 || d > policy.MaxNeverFitsFailAfter {
				t.errf("never_fits_fail_after", "%v is out of range 0s..%v", d, policy.MaxNeverFitsFailAfter)
			} else {
				p.NeverFitsFailAfter = d
			}
		}
		if n, ok := t.integer("preemption_retries"); ok {
			p.PreemptionRetries = n
			if n < policy.Unlimited {
				t.errf("preemption_retries", "%d is below -1 (-1 means no limit)", n)
			}
		}
		if n, ok := t.integer("node_failure_retries"); ok {
			p.NodeFailureRetries = n
			if n < policy.Unlimited {
				t.errf("node_failure_retries", "%d is below -1 (-1 means no limit)", n)
			}
		}
		if n, ok := t.integer("start_failure_retries"); ok {
			p.StartFailureRetries = n
			if n < policy.Unlimited {
				t.errf("start_failure_retries", "%d is below -1 (-1 means no limit)", n)
			}
		}
		if n, ok := t.integer("pids_limit"); ok {
			p.PidsLimit = int64(n)
			if n < 0 {
				t.errf("pids_limit", "%d is negative (0 means no limit)", n)
			}
		}
		if b, ok := t.boolean("allow_user_namespaces"); ok {
			p.AllowUserNamespaces = b
		}
		if s, ok := t.str("network"); ok {
			p.Network = s
			if s != NetworkHost && s != NetworkNone {
				t.errf("network", "%q is not %q or %q", s, NetworkHost, NetworkNone)
			}
		}
		p.Mounts = t.mounts("mounts", l.clusterMounts)
		if b, ok := t.boolean("host_image"); ok {
			p.HostImage = b
			if !b && p.DefaultImage == HostImage {
				t.errf("host_image", "false, but default_image is %q", HostImage)
			}
		}
		if p.DefaultImage == HostImage {
			p.HostImage = true
		}
		switch v := t.strDefault("checkpoints", "shared"); v {
		case "shared":
		case "local":
			p.CheckpointsLocal = true
		default:
			t.errf("checkpoints", "%q: want \"shared\" (one checkpoint_root every node of the partition sees) or \"local\" (each node's own)", v)
		}
		if b, ok := t.boolean("interactive"); ok {
			p.Interactive = b
		}
		if d, ok := t.duration("max_interactive_walltime", 0); ok {
			p.MaxInteractiveWalltime = d
			switch {
			case d <= 0:
				t.errf("max_interactive_walltime", "must be positive")
			case p.MaxWalltime > 0 && d > p.MaxWalltime:
				t.errf("max_interactive_walltime", "%v is above max_walltime %v", d, p.MaxWalltime)
			case !p.Interactive:
				t.errf("max_interactive_walltime", "set, but interactive = false")
			}
		}
		if n, ok := t.integer("idle_threshold"); ok {
			p.IdleThreshold = float64(n)
			if n < 1 || n > 100 {
				t.errf("idle_threshold", "%d is out of range 1..100 (percent of GPU use)", n)
			}
		}
		if d, ok := t.duration("idle_after", 0); ok {
			p.IdleAfter = d
			if d < time.Minute || d > 30*24*time.Hour {
				t.errf("idle_after", "%v is out of range (1m to 30d; leave it out for no idle policy)", d)
			}
		}
		if t.has("idle_threshold") && p.IdleAfter == 0 {
			t.warnf("idle_threshold", "has no effect without idle_after")
		}
		l.idleAction(t, &p.Partition)
		if n, ok := t.integer("default_ncpus"); ok {
			p.DefaultNCPUs = n
			if n < 0 || n > MaxDefaultNCPUs {
				t.errf("default_ncpus", "%d is out of range 0..%d (0: the job's share of its node)", n, MaxDefaultNCPUs)
				p.DefaultNCPUs = 0
			}
		}
		for _, k := range []struct {
			key string
			v   *int64
		}{{"default_mem_per_gpu", &p.DefaultMemPerGPU}, {"default_mem_per_cpu", &p.DefaultMemPerCPU}} {
			if n, ok := t.size(k.key); ok {
				*k.v = n
				if n > MaxDefaultMem {
					t.errf(k.key, "%d bytes is above %d (1PiB)", n, int64(MaxDefaultMem))
					*k.v = 0
				}
			}
		}
		p.Topology = t.strDefault("topology", "")
		p.DefaultTopologyLevel = t.strDefault("default_topology_level", "")
		t.unknown(keys["partition"]...)
		out = append(out, p)
	}
	return out
}

// hostnames expands a hostlist of node names, reporting bad syntax, bad
// names and duplicates; it gives no names when the list cannot be used.
func (t *table) hostnames(key, s string) ([]string, bool) {
	names, err := ExpandHostlist(s)
	if err != nil {
		t.errf(key, "%v", err)
		return nil, false
	}
	if len(names) == 0 {
		t.errf(key, "empty (want a hostlist such as \"gpu[01-16]\")")
		return nil, false
	}
	var bad, dups []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !validHost(n) {
			bad = append(bad, n)
		}
		if seen[n] {
			dups = append(dups, n)
		}
		seen[n] = true
	}
	if len(bad) > 0 {
		t.errf(key, "bad node name %q (want [A-Za-z0-9_.-], starting with a letter or digit)", bad[0])
	}
	if len(dups) > 0 {
		t.errf(key, "lists %s twice", CompressHostlist(dups))
	}
	if len(bad) > 0 || len(dups) > 0 {
		return nil, false
	}
	return names, true
}

// Bounds of a partition's job defaults.
const (
	MaxDefaultNCPUs = 1 << 16
	MaxDefaultMem   = 1 << 50
)
