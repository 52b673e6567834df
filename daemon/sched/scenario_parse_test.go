package sched

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Scenario files (testdata/scenarios/*.txt) are line based; '#' starts a
// comment. Configuration lines come first (and again after "reconfig",
// closed by "apply-config"):
//
//	partition NAME [retries=N] [node_retries=N] [start_retries=N] [ckpt_local] [walltime=SECONDS]
//	node NAME part=P gpus=N [cpus=N] [mem=N] [labels=k:v,k:v]
//	share NAME part=P gpus=N strategy=RESERVE|LEND|LEND_AND_BORROW [borrow=N] [inshare]
//	      [weight=N] [fair_users] [max_jobs_user=N] [max_gpus_user=N]
//	scheduler [fair_share] [backfill] [half_life=SECONDS] [fair_preempt] [fair_after=SECONDS]
//	topology NAME levels=L1,L2 part=P          (P's topology; levels outermost first)
//	domain NAME topo=T level=L nodes=n1,n2
//
// Events (err=unknown_job|unknown_node|duplicate|invalid expects Apply to fail):
//
//	up NODE|all [gpus=N] [cpus=N] [mem=N]      down NODE      drain NODE      resume NODE
//	submit ID share=S [user=U] [gpus=N] [nodes=N] [prio=N] [seq=N] [cpus=N] [mem=N] [wall=SECONDS]
//	       [labels=k:v,k:v] [hold=uos] [begin=T] [deps=afterok:ID,after:ID] [array=0-9:2%3|1,4,7|done%3]
//	       [prefer=NODE] [excl] [restored] [ran]   (Submitted.Restored, .Ran)
//	       [group=LEVEL[@SECONDS]|prefer_group=LEVEL]   (Job.Topology)
//	adopt ID share=S [gpus=N] [nodes=N] [prio=N] [seq=N] on=n1:0-3,n2:4-7 [preempting] [t=T]
//	cancel ID   exit ID [status=N]   requeue ID   startfail ID [refused]   prio ID N
//	hold ID uos   release ID uos   alter ID prio=N [begin=T] [deps=...] [wall=SECONDS]
//	outcome ID [status=N] [started] [cancelled] [failed]      forget ID,ID,...
//	move ID SHARE [prio=N] [order=N]      swap ID ID
//
// A pass and what its plan must hold, exactly (starts and preempts in plan
// order; requeued, finished, failed in plan order; pending as a set):
//
//	schedule t=N
//	expect start ID node=N gpus=0-3 [node=N gpus=...]
//	expect preempt VICTIM for=ID kind=cross_share|in_share|fair_share
//	expect requeued ID | expect finished ID
//	expect failed ID reason=REASON
//	expect pending ID reason=REASON
//
// State checks:
//
//	check job ID [state=S] [reason=R] [preemptions=N] [node_failures=N] [start_failures=N] [hold=uos] [nodes=n1,n2] [prefer=NODE]
//	          [est=T|none] [est_on=n1:0-3+n2:0-3]   (the reservation's start and GPUs)
//	check gone ID
//	check share S [inuse=N] [borrowed=N] [lent=N] [pending=N] [running=N] [usage=GPU-SECONDS, rounded]
//	check node N used=0-3|none

type scStep struct {
	line     int
	text     string
	ev       Event
	wantErr  string
	schedule bool
	at       time.Time
	expects  []scExpect
	check    *scCheck
}

type scExpect struct {
	line  int
	kind  string // start, preempt, requeued, finished, failed, pending
	job   JobID
	other JobID // preempt: For
	pk    string
	r     string
	alloc []Alloc
}

type scCheck struct {
	what string // job, gone, share, node
	name string
	kv   map[string]string
}

type scenario struct {
	cfg   Config
	steps []scStep
}

// scBase is time zero of scenario times (t=N is N seconds later).
var scBase = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

func scTime(s string) (time.Time, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return scBase.Add(time.Duration(n) * time.Second), nil
}

// scLabels reads "gpu_type:a100,ib:hdr"; "" is no labels.
func scLabels(s string) map[string]string {
	if s == "" {
		return nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, ":")
		out[k] = v
	}
	return out
}

// scArgs splits "k=v" arguments and bare flags.
func scArgs(fields []string) (map[string]string, error) {
	kv := map[string]string{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			v = "true"
		}
		if k == "" {
			return nil, fmt.Errorf("empty key in %q", f)
		}
		if _, dup := kv[k]; dup && k != "node" && k != "gpus" {
			return nil, fmt.Errorf("duplicate argument %q", k)
		}
		kv[k] = v
	}
	return kv, nil
}

func scInt(kv map[string]string, k string, def int) (int, error) {
	v, ok := kv[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: not a number", k, v)
	}
	return n, nil
}

// scRange parses "0-3", "0,2,5", "0-7:2" or "none".
func scRange(s string) ([]int, error) {
	if s == "none" || s == "" {
		return []int{}, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		step := 1
		if a, b, ok := strings.Cut(part, ":"); ok {
			n, err := strconv.Atoi(b)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("bad step in %q", part)
			}
			part, step = a, n
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad index %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 100000 {
				return nil, fmt.Errorf("bad range %q", part)
			}
		}
		for i := a; i <= b; i += step {
			out = append(out, i)
		}
	}
	return out, nil
}

func scHold(s string) (Hold, error) {
	var h Hold
	for _, c := range s {
		switch c {
		case 'u':
			h |= HoldUser
		case 'o':
			h |= HoldAdmin
		case 's':
			h |= HoldSystem
		default:
			return 0, fmt.Errorf("bad hold %q", s)
		}
	}
	return h, nil
}

func scDeps(s string) ([]Dep, error) {
	var out []Dep
	for _, d := range strings.Split(s, ",") {
		t, id, ok := strings.Cut(d, ":")
		if !ok || id == "" {
			return nil, fmt.Errorf("bad dependency %q", d)
		}
		dt, err := ParseDepType(t)
		if err != nil {
			return nil, err
		}
		out = append(out, Dep{Type: dt, On: JobID(id)})
	}
	return out, nil
}

func scReason(s string) (Reason, error) {
	for r := ReasonNone; int(r) < len(reasonNames); r++ {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("unknown reason %q", s)
}

// scJob builds a Job from submit/adopt arguments.
func scJob(id string, kv map[string]string, seq *uint64) (Job, error) {
	j := Job{ID: JobID(id), Share: kv["share"], User: kv["user"]}
	var err error
	if j.GPUsPerNode, err = scInt(kv, "gpus", 1); err != nil {
		return j, err
	}
	if j.Nodes, err = scInt(kv, "nodes", 1); err != nil {
		return j, err
	}
	if j.Order, err = scInt(kv, "order", 0); err != nil {
		return j, err
	}
	if j.Priority, err = scInt(kv, "prio", 0); err != nil {
		return j, err
	}
	if j.CPUsPerNode, err = scInt(kv, "cpus", 0); err != nil {
		return j, err
	}
	mem, err := scInt(kv, "mem", 0)
	if err != nil {
		return j, err
	}
	j.MemPerNode = int64(mem)
	j.Labels = scLabels(kv["labels"])
	j.PreferNode = kv["prefer"]
	j.Exclusive = kv["excl"] == "true"
	wall, err := scInt(kv, "wall", 0)
	if err != nil {
		return j, err
	}
	j.Walltime = time.Duration(wall) * time.Second
	j.Interactive = kv["interactive"] == "true"
	if g, ok := kv["group"]; ok {
		lv, w, _ := strings.Cut(g, "@")
		j.Topology = TopologyRequest{Level: lv}
		if w != "" {
			n, err := strconv.Atoi(w)
			if err != nil {
				return j, fmt.Errorf("bad group wait %q", w)
			}
			j.Topology.Wait = time.Duration(n) * time.Second
		}
	}
	if g, ok := kv["prefer_group"]; ok {
		j.Topology = TopologyRequest{Level: g, Preferred: true}
	}
	*seq++
	sq, err := scInt(kv, "seq", int(*seq))
	if err != nil || sq < 0 {
		return j, fmt.Errorf("bad seq")
	}
	j.Seq = uint64(sq)
	j.Submit = scBase.Add(time.Duration(j.Seq) * time.Millisecond)
	if h, ok := kv["hold"]; ok {
		if j.Hold, err = scHold(h); err != nil {
			return j, err
		}
	}
	if b, ok := kv["begin"]; ok {
		if j.NotBefore, err = scTime(b); err != nil {
			return j, err
		}
	}
	if d, ok := kv["deps"]; ok {
		if j.Deps, err = scDeps(d); err != nil {
			return j, err
		}
	}
	if a, ok := kv["array"]; ok {
		spec, mx, _ := strings.Cut(a, "%")
		arr := &Array{}
		if spec != "done" { // "done": every index has started (a restored array)
			if arr.Indices, err = scRange(spec); err != nil {
				return j, err
			}
		}
		if mx != "" {
			if arr.MaxRunning, err = strconv.Atoi(mx); err != nil {
				return j, fmt.Errorf("bad %%max %q", mx)
			}
		}
		j.Array = arr
	}
	return j, nil
}

var scErrKinds = map[string]bool{"unknown_job": true, "unknown_node": true, "duplicate": true, "invalid": true}

// parseScenario decodes a scenario file.
func parseScenario(text string) (*scenario, error) {
	sc := &scenario{}
	var draft *Config // configuration being written
	inConfig := true  // before the first event
	var seq uint64
	cur := -1 // the last schedule step (expectations attach to it)
	for ln, raw := range strings.Split(text, "\n") {
		line := ln + 1
		if i := strings.IndexByte(raw, '#'); i >= 0 {
			raw = raw[:i]
		}
		f := strings.Fields(raw)
		if len(f) == 0 {
			continue
		}
		fail := func(format string, a ...any) error {
			return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, a...))
		}
		cfg := &sc.cfg
		if draft != nil {
			cfg = draft
		}
		switch f[0] {
		case "partition", "node", "share", "scheduler", "topology", "domain":
			if !inConfig && draft == nil {
				return nil, fail("%s outside the configuration (use reconfig)", f[0])
			}
			if f[0] == "scheduler" {
				kv, err := scArgs(f[1:])
				if err != nil {
					return nil, fail("%v", err)
				}
				hl, err := scInt(kv, "half_life", 0)
				if err != nil {
					return nil, fail("%v", err)
				}
				cfg.FairShare, cfg.UsageHalfLife = kv["fair_share"] == "true", time.Duration(hl)*time.Second
				cfg.Backfill = kv["backfill"] == "true"
				fa, err := scInt(kv, "fair_after", 0)
				if err != nil {
					return nil, fail("%v", err)
				}
				cfg.FairPreemption, cfg.FairPreemptionAfter = kv["fair_preempt"] == "true", time.Duration(fa)*time.Second
				continue
			}
			if len(f) < 2 {
				return nil, fail("%s needs a name", f[0])
			}
			kv, err := scArgs(f[2:])
			if err != nil {
				return nil, fail("%v", err)
			}
			switch f[0] {
			case "topology":
				cfg.Topologies = append(cfg.Topologies, Topology{Name: f[1], Levels: strings.Split(kv["levels"], ",")})
				for i := range cfg.Partitions {
					if cfg.Partitions[i].Name == kv["part"] {
						cfg.Partitions[i].Topology = f[1]
					}
				}
			case "domain":
				k := -1
				for i := range cfg.Topologies {
					if cfg.Topologies[i].Name == kv["topo"] {
						k = i
					}
				}
				if k < 0 {
					return nil, fail("domain %s: unknown topology %q", f[1], kv["topo"])
				}
				cfg.Topologies[k].Domains = append(cfg.Topologies[k].Domains, Domain{Level: kv["level"], Name: f[1], Nodes: strings.Split(kv["nodes"], ",")})
			case "partition":
				r, err := scInt(kv, "retries", Unlimited)
				if err != nil {
					return nil, fail("%v", err)
				}
				nr, err := scInt(kv, "node_retries", Unlimited)
				if err != nil {
					return nil, fail("%v", err)
				}
				sr, err := scInt(kv, "start_retries", Unlimited)
				if err != nil {
					return nil, fail("%v", err)
				}
				w, err := scInt(kv, "walltime", 0)
				if err != nil {
					return nil, fail("%v", err)
				}
				nf, err := scInt(kv, "never_fits_fail", 0)
				if err != nil {
					return nil, fail("%v", err)
				}
				cfg.Partitions = append(cfg.Partitions, Partition{Name: f[1], PreemptionRetries: r, NodeFailureRetries: nr, StartFailureRetries: sr,
					CheckpointsLocal: kv["ckpt_local"] == "true", DefaultWalltime: time.Duration(w) * time.Second,
					NeverFitsFailAfter: time.Duration(nf) * time.Second})
			case "node":
				g, err1 := scInt(kv, "gpus", 0)
				c, err2 := scInt(kv, "cpus", 0)
				m, err3 := scInt(kv, "mem", 0)
				if err1 != nil || err2 != nil || err3 != nil {
					return nil, fail("bad node numbers")
				}
				cfg.Nodes = append(cfg.Nodes, Node{Name: f[1], Partition: kv["part"], GPUs: g, CPUs: c, MemBytes: int64(m), Labels: scLabels(kv["labels"])})
			case "share":
				g, err1 := scInt(kv, "gpus", 0)
				b, err2 := scInt(kv, "borrow", 0)
				w, err3 := scInt(kv, "weight", 0)
				mj, err4 := scInt(kv, "max_jobs_user", 0)
				mg, err5 := scInt(kv, "max_gpus_user", 0)
				if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
					return nil, fail("bad share numbers")
				}
				st, err := ParseStrategy(kv["strategy"])
				if err != nil {
					return nil, fail("%v", err)
				}
				cfg.Shares = append(cfg.Shares, Share{Name: f[1], Partition: kv["part"], GPUs: g, Strategy: st, BorrowLimit: b, InSharePreemption: kv["inshare"] == "true",
					FairWeight: w, FairShareUsers: kv["fair_users"] == "true", MaxRunningJobsPerUser: mj, MaxGPUsPerUser: mg})
			}
			continue
		case "reconfig":
			if draft != nil {
				return nil, fail("reconfig inside reconfig")
			}
			draft = &Config{}
			inConfig = false
			continue
		case "apply-config":
			if draft == nil {
				return nil, fail("apply-config without reconfig")
			}
			sc.steps = append(sc.steps, scStep{line: line, text: raw, ev: ConfigReplaced{Config: *draft}})
			draft = nil
			cur = -1
			continue
		}
		if draft != nil {
			return nil, fail("%q inside reconfig", f[0])
		}
		inConfig = false
		if f[0] == "expect" {
			if cur < 0 {
				return nil, fail("expect without a schedule before it")
			}
			if len(f) < 3 {
				return nil, fail("expect KIND ID ...")
			}
			kv, err := scArgs(f[3:])
			if err != nil {
				return nil, fail("%v", err)
			}
			e := scExpect{line: line, kind: f[1], job: JobID(f[2])}
			switch f[1] {
			case "start":
				nodes, gpus := scPairs(f[3:])
				if len(nodes) == 0 || len(nodes) != len(gpus) {
					return nil, fail("expect start needs node=N gpus=R pairs")
				}
				for i := range nodes {
					g, err := scRange(gpus[i])
					if err != nil {
						return nil, fail("%v", err)
					}
					e.alloc = append(e.alloc, Alloc{Node: nodes[i], GPUs: g})
				}
			case "preempt":
				e.other, e.pk = JobID(kv["for"]), kv["kind"]
				if e.other == "" || (e.pk != "cross_share" && e.pk != "in_share" && e.pk != "fair_share") {
					return nil, fail("expect preempt needs for= and kind=cross_share|in_share")
				}
			case "requeued", "finished":
			case "failed", "pending":
				if _, err := scReason(kv["reason"]); err != nil {
					return nil, fail("%v", err)
				}
				e.r = kv["reason"]
			default:
				return nil, fail("unknown expectation %q", f[1])
			}
			sc.steps[cur].expects = append(sc.steps[cur].expects, e)
			continue
		}
		st := scStep{line: line, text: raw}
		args := f[1:]
		if len(args) > 0 && strings.HasPrefix(args[len(args)-1], "err=") {
			st.wantErr = strings.TrimPrefix(args[len(args)-1], "err=")
			if !scErrKinds[st.wantErr] {
				return nil, fail("unknown error kind %q", st.wantErr)
			}
			args = args[:len(args)-1]
		}
		need := func(n int) error {
			if len(args) < n {
				return fail("%s needs %d argument(s)", f[0], n)
			}
			return nil
		}
		var err error
		switch f[0] {
		case "schedule":
			kv, e := scArgs(args)
			if e != nil {
				return nil, fail("%v", e)
			}
			if st.at, err = scTime(kv["t"]); err != nil {
				return nil, fail("%v", err)
			}
			st.schedule = true
		case "up":
			if err = need(1); err != nil {
				return nil, err
			}
			kv, e := scArgs(args[1:])
			if e != nil {
				return nil, fail("%v", e)
			}
			g, e := scInt(kv, "gpus", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			c, e := scInt(kv, "cpus", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			m, e := scInt(kv, "mem", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			if args[0] == "all" {
				for _, n := range sc.cfg.Nodes {
					sc.steps = append(sc.steps, scStep{line: line, text: raw, ev: NodeUp{Node: n.Name, GPUs: g, CPUs: c, MemBytes: int64(m)}})
				}
				continue
			}
			st.ev = NodeUp{Node: args[0], GPUs: g, CPUs: c, MemBytes: int64(m)}
		case "down", "drain", "resume", "cancel", "requeue", "startfail":
			if err = need(1); err != nil {
				return nil, err
			}
			switch f[0] {
			case "down":
				st.ev = NodeDown{Node: args[0]}
			case "drain":
				st.ev = NodeDrained{Node: args[0]}
			case "resume":
				st.ev = NodeResumed{Node: args[0]}
			case "cancel":
				st.ev = Cancelled{ID: JobID(args[0])}
			case "requeue":
				st.ev = Requeued{ID: JobID(args[0])}
			case "startfail":
				kv, e := scArgs(args[1:])
				if e != nil {
					return nil, fail("%v", e)
				}
				st.ev = StartFailed{ID: JobID(args[0]), Refused: kv["refused"] == "true"}
			}
		case "exit":
			if err = need(1); err != nil {
				return nil, err
			}
			kv, e := scArgs(args[1:])
			if e != nil {
				return nil, fail("%v", e)
			}
			code, e := scInt(kv, "status", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			st.ev = Exited{ID: JobID(args[0]), ExitStatus: code}
		case "prio":
			if err = need(2); err != nil {
				return nil, err
			}
			p, e := strconv.Atoi(args[1])
			if e != nil {
				return nil, fail("bad priority")
			}
			kv, e := scArgs(args[2:])
			if e != nil {
				return nil, fail("%v", e)
			}
			o, e := scInt(kv, "order", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			st.ev = PriorityChanged{ID: JobID(args[0]), Priority: p, Order: o}
		case "swap":
			if err = need(2); err != nil {
				return nil, err
			}
			st.ev = Swapped{A: JobID(args[0]), B: JobID(args[1])}
		case "move":
			if err = need(2); err != nil {
				return nil, err
			}
			kv, e := scArgs(args[2:])
			if e != nil {
				return nil, fail("%v", e)
			}
			p, e := scInt(kv, "prio", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			o, e := scInt(kv, "order", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			st.ev = Moved{ID: JobID(args[0]), Share: args[1], Priority: p, Order: o}
		case "hold", "release":
			if err = need(2); err != nil {
				return nil, err
			}
			h, e := scHold(args[1])
			if e != nil {
				return nil, fail("%v", e)
			}
			st.ev = HoldChanged{ID: JobID(args[0]), Set: f[0] == "hold", Bit: h}
		case "alter":
			if err = need(1); err != nil {
				return nil, err
			}
			kv, e := scArgs(args[1:])
			if e != nil {
				return nil, fail("%v", e)
			}
			a := JobAltered{ID: JobID(args[0])}
			if a.Priority, e = scInt(kv, "prio", 0); e != nil {
				return nil, fail("%v", e)
			}
			if a.Order, e = scInt(kv, "order", 0); e != nil {
				return nil, fail("%v", e)
			}
			if b, ok := kv["begin"]; ok {
				if a.NotBefore, e = scTime(b); e != nil {
					return nil, fail("%v", e)
				}
			}
			if d, ok := kv["deps"]; ok {
				if a.Deps, e = scDeps(d); e != nil {
					return nil, fail("%v", e)
				}
			}
			w, e := scInt(kv, "wall", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			a.Walltime = time.Duration(w) * time.Second
			st.ev = a
		case "forget":
			if err = need(1); err != nil {
				return nil, err
			}
			var ids []JobID
			for _, id := range strings.Split(args[0], ",") {
				ids = append(ids, JobID(id))
			}
			st.ev = Forgotten{IDs: ids}
		case "outcome":
			if err = need(1); err != nil {
				return nil, err
			}
			kv, e := scArgs(args[1:])
			if e != nil {
				return nil, fail("%v", e)
			}
			code, e := scInt(kv, "status", 0)
			if e != nil {
				return nil, fail("%v", e)
			}
			st.ev = DependencyOutcome{ID: JobID(args[0]), ExitStatus: code, Started: kv["started"] == "true",
				Cancelled: kv["cancelled"] == "true", Failed: kv["failed"] == "true"}
		case "submit", "adopt":
			if err = need(1); err != nil {
				return nil, err
			}
			kv, e := scArgs(args[1:])
			if e != nil {
				return nil, fail("%v", e)
			}
			j, e := scJob(args[0], kv, &seq)
			if e != nil {
				return nil, fail("%v", e)
			}
			if f[0] == "submit" {
				st.ev = Submitted{Job: j, Restored: kv["restored"] == "true", Ran: kv["ran"] == "true"}
				break
			}
			ad := Adopted{Job: j, Preempting: kv["preempting"] == "true"}
			if t, ok := kv["t"]; ok {
				if ad.Started, e = scTime(t); e != nil {
					return nil, fail("%v", e)
				}
			}
			for _, on := range strings.Split(kv["on"], ",") {
				n, r, ok := strings.Cut(on, ":")
				if !ok {
					return nil, fail("adopt needs on=node:gpus,...")
				}
				g, e := scRange(r)
				if e != nil {
					return nil, fail("%v", e)
				}
				ad.Allocs = append(ad.Allocs, Alloc{Node: n, GPUs: g})
			}
			st.ev = ad
		case "check":
			if err = need(2); err != nil {
				return nil, err
			}
			kv, e := scArgs(args[2:])
			if e != nil {
				return nil, fail("%v", e)
			}
			switch args[0] {
			case "job", "gone", "share", "node":
			default:
				return nil, fail("unknown check %q", args[0])
			}
			st.check = &scCheck{what: args[0], name: args[1], kv: kv}
		default:
			return nil, fail("unknown command %q", f[0])
		}
		sc.steps = append(sc.steps, st)
		if st.schedule {
			cur = len(sc.steps) - 1
		} else if st.check == nil {
			cur = -1
		}
	}
	if draft != nil {
		return nil, fmt.Errorf("reconfig without apply-config")
	}
	return sc, nil
}

// scPairs returns the node= and gpus= values of an expect start line, in
// order.
func scPairs(fields []string) (nodes, gpus []string) {
	for _, f := range fields {
		if v, ok := strings.CutPrefix(f, "node="); ok {
			nodes = append(nodes, v)
		} else if v, ok := strings.CutPrefix(f, "gpus="); ok {
			gpus = append(gpus, v)
		}
	}
	return nodes, gpus
}
