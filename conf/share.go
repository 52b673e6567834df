package conf

import (
	"fmt"

	"github.com/sharq-hpc/sharq/policy"
)

// shareBlock is a [[share]] block while the file is checked.
type shareBlock struct {
	Share
	t *table
}

func (l *loader) shares(ts []*table, parts []*partBlock) []*shareBlock {
	partNames := map[string]bool{}
	for _, p := range parts {
		partNames[p.Name] = true
	}
	seen := map[string]*shareBlock{}
	var out []*shareBlock
	for _, t := range ts {
		s := &shareBlock{t: t, Share: Share{
			Strategy:        policy.LendAndBorrow,
			BorrowLimit:     policy.Unlimited,
			Enabled:         true,
			PriorityDefault: DefaultPriority,
		}}
		out = append(out, s)
		if name, ok := t.str("name"); ok {
			s.Name = name
			t.ctx = "share " + quote(name)
			if first, dup := seen[name]; dup {
				t.errf("name", "defined twice (first at line %d)", first.t.line("name"))
			} else {
				seen[name] = s
			}
			if !validName(name) {
				t.errf("name", "%q is not a valid name (want 1 to 63 of [A-Za-z0-9_.-], starting with a letter or digit)", name)
			}
		} else if !t.has("name") {
			t.errAt("", "name is required")
		}

		if p, ok := t.str("partition"); ok {
			s.Partition = p
			if !partNames[p] {
				t.errf("partition", "unknown partition %q", p)
			}
		} else if !t.has("partition") {
			if len(parts) == 1 {
				s.Partition = parts[0].Name
			} else {
				t.errAt("", "partition is required when there are %d partitions", len(parts))
			}
		}

		if n, ok := t.integer("gpus"); ok {
			s.GPUs = n
			if n < 0 {
				t.errf("gpus", "%d is negative", n)
				s.GPUs = 0
			}
		}
		strategyOK := !t.has("strategy")
		if v, ok := t.str("strategy"); ok {
			st, err := policy.ParseStrategy(v)
			if err != nil {
				t.errf("strategy", "%v", err)
			} else {
				s.Strategy, strategyOK = st, true
			}
		}
		if n, ok := t.integer("borrow_limit"); ok {
			s.BorrowLimit = n
			if n < policy.Unlimited {
				t.errf("borrow_limit", "%d is below -1 (-1 means no limit)", n)
			}
			if strategyOK && s.Strategy != policy.LendAndBorrow {
				t.errf("borrow_limit", "set, but only LEND_AND_BORROW shares borrow (strategy is %v)", s.Strategy)
			}
			// A share may borrow floor(gpus * borrow_limit / 100) GPUs.
			switch b := s.GPUs * n / 100; {
			case n < 0 || !strategyOK || s.Strategy != policy.LendAndBorrow:
			case s.GPUs == 0:
				t.errf("borrow_limit", "%d%% of a quota of 0 GPUs is no GPU: the share could never run a job (use -1 for no limit, or give it a quota)", n)
			case b == 0 && n > 0:
				t.warnf("borrow_limit", "%d%% of %d GPUs rounds down to 0 borrowable GPUs (the share may borrow floor(gpus*borrow_limit/100))", n, s.GPUs)
			}
		}
		if b, ok := t.boolean("in_share_preemption"); ok {
			s.InSharePreemption = b
		}
		if users, ok := t.strings("users"); ok {
			s.Users = users
			for _, u := range users {
				if why := checkPrincipal(u, true); why != "" {
					t.errf("users", "%s", why)
				}
			}
		} else if !t.has("users") {
			t.errAt("", `users is required (who may submit: user names, "@group", or "*" for anyone)`)
		}
		if v, ok := t.str("state"); ok {
			switch v {
			case "ENABLED":
				s.Enabled = true
			case "DISABLED":
				s.Enabled = false
			default:
				t.errf("state", "unknown state %q (want ENABLED or DISABLED)", v)
			}
		}
		if n, ok := t.integer("priority_default"); ok {
			s.PriorityDefault = n
			if n < 0 || n > MaxPriority {
				t.errf("priority_default", "%d is out of range 0..%d", n, MaxPriority)
			}
		}
		if n, ok := t.integer("fair_weight"); ok {
			s.FairWeight = n
			if n < 1 || n > MaxFairWeight {
				t.errf("fair_weight", "%d is out of range 1..%d", n, MaxFairWeight)
			}
		}
		if b, ok := t.boolean("fair_share_users"); ok {
			s.FairShareUsers = b
		}
		for _, k := range []struct {
			key string
			v   *int
		}{{"max_running_jobs_per_user", &s.MaxRunningJobsPerUser}, {"max_gpus_per_user", &s.MaxGPUsPerUser},
			{"max_queued_jobs_per_user", &s.MaxQueuedJobsPerUser}} {
			if n, ok := t.integer(k.key); ok {
				*k.v = n
				if n < 0 || n > MaxPerUserLimit {
					t.errf(k.key, "%d is out of range 0..%d (0 means no limit)", n, MaxPerUserLimit)
					*k.v = 0
				}
			}
		}
		t.unknown(keys["share"]...)
	}
	return out
}

// checkFairKeys warns of fair share keys that do nothing because
// [scheduler] fair_share is false.
func (l *loader) checkFairKeys(sc Scheduler, shares []*shareBlock) {
	if sc.FairShare {
		return
	}
	for _, s := range shares {
		for _, k := range []string{"fair_weight", "fair_share_users"} {
			if s.t.has(k) {
				s.t.warnf(k, "has no effect: [scheduler] fair_share is false")
			}
		}
	}
}

// Bounds of the fair share and per-user keys of a [[share]].
const (
	MaxFairWeight   = 1 << 20
	MaxPerUserLimit = 1 << 30
)

// checkQuotas reports partitions whose shares guarantee more GPUs than
// their nodes have. It is skipped for partitions whose capacity is unsure
// because of problems already reported.
func (l *loader) checkQuotas(parts []*partBlock, nodes []*nodeBlock, shares []*shareBlock) {
	for _, b := range nodes {
		if !b.namesOK || !b.gpusOK {
			return
		}
	}
	for _, p := range parts {
		if !p.nodesOK || p.Name == "" {
			continue
		}
		capacity := 0
		for _, b := range nodes {
			for _, n := range b.nodes {
				if n.Partition == p.Name {
					capacity += n.GPUs
				}
			}
		}
		sum := 0
		detail := ""
		var over *shareBlock
		for _, s := range shares {
			if s.Partition != p.Name {
				continue
			}
			sum += s.GPUs
			if detail != "" {
				detail += ", "
			}
			detail += fmt.Sprintf("%s %d", s.Name, s.GPUs)
			if over == nil && sum > capacity {
				over = s
			}
		}
		if over != nil {
			key := "gpus"
			if !over.t.has(key) {
				key = ""
			}
			over.t.errAt(key, "the shares of partition %q guarantee %d GPUs, but its nodes have %d (%s)", p.Name, sum, capacity, detail)
		}
	}
}
