package sched

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"
)

// The property tests' generator of the rarer events and knobs: jobs with
// labels, holds, begin times, dependencies of every type, interactive and
// array jobs; start failures, requeues, qalter, admin and system holds,
// restored dependency outcomes, qdel of an array index; events and
// configurations the core must refuse (and, refused, change nothing); and
// reloads that add and remove shares, nodes and a partition.

// gpuTypes are the node labels of random configurations; the last is on
// no node (a job selecting it never fits).
var gpuTypes = []string{"a100", "h100", "mi300"}

// submit draws a job (sometimes one the core must refuse) and submits it.
func (w *world) submit() {
	t := w.t
	w.seq++
	id := JobID(fmt.Sprintf("j%d", w.seq))
	j := Job{
		ID: id, Seq: w.seq, Share: rapid.SampledFrom(w.cfg.Shares).Draw(t, "share").Name,
		Priority:    rapid.IntRange(0, 3).Draw(t, "prio"),
		Order:       rapid.IntRange(-1, 1).Draw(t, "order"),
		Nodes:       rapid.SampledFrom([]int{1, 1, 1, 1, 2, 3}).Draw(t, "jn"),
		GPUsPerNode: rapid.SampledFrom([]int{1, 1, 2, 2, 3, 4, 6, 8, 9}).Draw(t, "jg"),
		User:        rapid.SampledFrom(userNames).Draw(t, "user"),
		Submit:      w.now,
	}
	if w.walls {
		// 0: the partition's default walltime.
		j.Walltime = time.Duration(rapid.SampledFrom([]int{0, 1, 3, 10, 30}).Draw(t, "wall")) * time.Second
	} else if rapid.IntRange(0, 3).Draw(t, "hasWall") == 0 {
		j.Walltime = time.Duration(rapid.SampledFrom([]int{1, 10}).Draw(t, "wall0")) * time.Second
	}
	if w.cpus {
		j.GPUsPerNode = rapid.SampledFrom([]int{0, 1, 1, 2, 2, 3, 4, 6, 9}).Draw(t, "jg0")
		j.CPUsPerNode = rapid.IntRange(0, 3).Draw(t, "jc")
		j.MemPerNode = rapid.SampledFrom([]int64{0, 0, 1, 4}).Draw(t, "jm")
	}
	j.Exclusive = rapid.IntRange(0, 5).Draw(t, "excl") == 0
	if w.topo {
		j.Topology = w.drawTopoRequest()
	}
	if w.burst > 0 {
		// A contention world: the first borrower's burst of long jobs,
		// then mostly the other borrowers' jobs.
		if w.seq <= uint64(w.burst) {
			// Small plain jobs: a fair-share preemption takes some.
			j.Share, j.Walltime, j.Nodes, j.Exclusive = w.cfg.Shares[1].Name, 30*time.Second, 1, false
			j.GPUsPerNode, j.CPUsPerNode, j.MemPerNode = rapid.IntRange(1, 2).Draw(t, "burstGPUs"), 0, 0
			w.submitJob(j)
			return
		} else if len(w.cfg.Shares) > 2 && rapid.Bool().Draw(t, "otherBorrower") {
			j.Share = rapid.SampledFrom(w.cfg.Shares[2:]).Draw(t, "borrower").Name
		}
	}
	if !w.rich {
		w.submitJob(w.maybeArray(j))
		return
	}
	labelled := len(w.cfg.Nodes[0].Labels) > 0
	if rapid.IntRange(0, 4).Draw(t, "hasLabels") == 0 && (labelled || rapid.IntRange(0, 3).Draw(t, "labelsAnyway") == 0) {
		// The last type is on no node: such a job never fits.
		j.Labels = map[string]string{"gpu_type": rapid.SampledFrom(append(gpuTypes[:2:2], gpuTypes...)).Draw(t, "jobType")}
	}
	if rapid.IntRange(0, 9).Draw(t, "submitHeld") == 0 {
		j.Hold = rapid.SampledFrom([]Hold{HoldUser, HoldAdmin}).Draw(t, "submitHold")
	}
	if rapid.IntRange(0, 5).Draw(t, "hasBegin") == 0 {
		j.NotBefore = w.now.Add(time.Duration(rapid.IntRange(0, 8).Draw(t, "begin")) * time.Second)
	}
	j.Interactive = rapid.IntRange(0, 14).Draw(t, "interactive") == 0
	if rapid.IntRange(0, 2).Draw(t, "hasDeps") == 0 {
		j.Deps = w.drawDeps(w.seq)
	}
	j = w.maybeArray(j)
	bad := rapid.IntRange(0, 19).Draw(t, "badSubmit") == 0
	if bad {
		switch rapid.IntRange(0, 8).Draw(t, "badHow") {
		case 0:
			if rapid.Bool().Draw(t, "badOrder") {
				j.Order = MaxOrder + 1
			} else {
				j.Priority = maxPriority + 1
			}
		case 1:
			j.Share = "nosuch"
		case 2:
			j.Nodes = 0
		case 3:
			if known := slices.DeleteFunc(slices.Clone(w.ids), func(id JobID) bool { return w.forgot[id] }); len(known) > 0 {
				j.ID = rapid.SampledFrom(known).Draw(t, "dupID")
			} else {
				j.GPUsPerNode = -1
			}
		case 4:
			j.Walltime = -time.Second
		case 5:
			j.ID = JobID(fmt.Sprintf("%d[]", w.seq))
			j.Array = &Array{Indices: []int{3, 1}}
		case 6:
			j.ID = JobID(fmt.Sprintf("%d[]", w.seq)) // an array id without Array
			j.Array = nil
		case 7:
			j.Deps = append(j.Deps, Dep{Type: AfterOK, On: "nosuch"})
		case 8:
			j.Deps = append(j.Deps, Dep{Type: AfterAny, On: j.ID})
		}
	}
	w.submitJob(j)
}

// submitJob counts j's knobs and submits it; the world knows it once the
// core accepts it.
func (w *world) submitJob(j Job) {
	w.cover(j)
	if err := w.apply(Submitted{Job: j}); err == nil {
		w.ids = append(w.ids, j.ID)
	}
}

// maybeArray makes one job in ten an array job.
func (w *world) maybeArray(j Job) Job {
	t := w.t
	if rapid.IntRange(0, 9).Draw(t, "arr") == 0 {
		j.ID = JobID(fmt.Sprintf("%d[]", j.Seq))
		var idx []int
		for i := 0; i < 6; i++ {
			if rapid.IntRange(0, 2).Draw(t, "index") > 0 {
				idx = append(idx, i)
			}
		}
		j.Array = &Array{Indices: idx, MaxRunning: rapid.IntRange(0, 2).Draw(t, "max")}
	}
	return j
}

// cover counts the knobs of a job.
func (w *world) cover(j Job) {
	c := w.cov
	if j.Nodes > 1 {
		c.add("job multi-node")
	}
	if j.Exclusive {
		c.add("job exclusive")
	}
	if j.Array != nil {
		c.add("job array")
		if j.Array.MaxRunning > 0 {
			c.add("job array max")
		}
	}
	if len(j.Labels) > 0 {
		c.add("job labels")
		matched := false
		for _, n := range w.cfg.Nodes {
			matched = matched || n.Labels["gpu_type"] == j.Labels["gpu_type"]
		}
		if !matched {
			c.add("job labels unmatched")
		}
	}
	if j.Hold != 0 {
		c.add("job hold")
	}
	if !j.NotBefore.IsZero() {
		c.add("job begin")
	}
	if j.Walltime > 0 {
		c.add("job walltime")
	}
	if j.Interactive {
		c.add("job interactive")
	}
	if j.GPUsPerNode == 0 {
		c.add("job no gpus")
	}
	if j.CPUsPerNode > 0 {
		c.add("job cpus")
	}
	if j.MemPerNode > 0 {
		c.add("job mem")
	}
}

// drawDeps draws one or two dependencies on jobs submitted before seq
// (plain jobs, arrays, subjobs, and jobs only a DependencyOutcome told of).
func (w *world) drawDeps(seq uint64) []Dep {
	var cands []JobID
	for _, id := range w.ids {
		if w.seqOf(id) < seq {
			cands = append(cands, id)
		}
	}
	cands = append(cands, w.o.outcomes...)
	// An array's index that has not started yet.
	for _, id := range w.ids {
		if info, ok := w.s.Job(id); ok && info.Job.Array != nil && len(info.Job.Array.Indices) > 0 && w.seqOf(id) < seq {
			cands = append(cands, subID(id, info.Job.Array.Indices[len(info.Job.Array.Indices)-1]))
		}
	}
	if len(cands) == 0 {
		return nil
	}
	var deps []Dep
	for n := rapid.IntRange(1, 2).Draw(w.t, "ndeps"); n > 0; n-- {
		d := Dep{Type: rapid.SampledFrom([]DepType{AfterOK, AfterNotOK, AfterAny, After}).Draw(w.t, "depType"), On: rapid.SampledFrom(cands).Draw(w.t, "depOn")}
		deps = append(deps, d)
		w.cov.add("dep " + d.Type.String())
		switch _, _, sub := splitSubID(d.On); {
		case isArrayID(d.On):
			w.cov.add("dep on array")
		case sub:
			w.cov.add("dep on subjob")
		case slices.Contains(w.o.outcomes, d.On):
			w.cov.add("dep on outcome")
		}
	}
	return deps
}

// seqOf returns the submission number in a job id of the world ("j12",
// "12[]", "12[3]", "o12").
func (w *world) seqOf(id JobID) uint64 {
	var n uint64
	for _, c := range string(id) {
		if c >= '0' && c <= '9' {
			n = n*10 + uint64(c-'0')
		} else if c == '[' {
			break
		}
	}
	return n
}

// pendingEntries returns the world's pending entries (arrays included) in
// id order.
func (w *world) pendingEntries() []JobID {
	var out []JobID
	for _, id := range w.ids {
		if info, ok := w.s.Job(id); ok && info.State == Pending {
			out = append(out, id)
		}
	}
	return out
}

// stepMore draws one of the rarer events.
func (w *world) stepMore(kind string) {
	t := w.t
	switch kind {
	case "startfail":
		if r := w.jobsIn(Running); len(r) > 0 {
			refused := rapid.IntRange(0, 3).Draw(t, "refused") == 0
			if w.apply(StartFailed{ID: rapid.SampledFrom(r).Draw(t, "sfj"), Refused: refused}) == nil {
				if refused {
					w.cov.add("startfail refused")
				} else {
					w.cov.add("startfail retry")
				}
			}
		}
	case "requeue":
		if r := w.jobsIn(Running, Killing); len(r) > 0 {
			w.apply(Requeued{ID: rapid.SampledFrom(r).Draw(t, "rqj")})
		}
	case "alter":
		pend := w.pendingEntries()
		if len(pend) == 0 {
			break
		}
		id := rapid.SampledFrom(pend).Draw(t, "aj")
		info, _ := w.s.Job(id)
		ev := JobAltered{ID: id, Priority: rapid.IntRange(0, 3).Draw(t, "ap"), Order: rapid.IntRange(-1, 1).Draw(t, "ao"), NotBefore: info.Job.NotBefore, Deps: info.Job.Deps, Walltime: info.Job.Walltime}
		if rapid.Bool().Draw(t, "alterBegin") {
			ev.NotBefore = time.Time{}
			if rapid.Bool().Draw(t, "alterBeginSet") {
				ev.NotBefore = w.now.Add(time.Duration(rapid.IntRange(0, 8).Draw(t, "abegin")) * time.Second)
			}
		}
		if rapid.IntRange(0, 2).Draw(t, "alterDeps") == 0 {
			ev.Deps = nil
			if rapid.Bool().Draw(t, "alterDepsSet") {
				ev.Deps = w.drawDeps(w.seqOf(id))
			}
		}
		if rapid.IntRange(0, 2).Draw(t, "alterWall") == 0 {
			ev.Walltime = time.Duration(rapid.SampledFrom([]int{0, 1, 10}).Draw(t, "awall")) * time.Second
		}
		if w.apply(ev) == nil {
			if !ev.NotBefore.Equal(info.Job.NotBefore) {
				w.cov.add("alter begin")
			}
			if !sameDeps(ev.Deps, info.Job.Deps) {
				w.cov.add("alter deps")
			}
			if ev.Walltime != info.Job.Walltime {
				w.cov.add("alter walltime")
			}
		}
	case "move":
		// qmove: any job (the core refuses what may not move) to any
		// share of the configuration.
		if len(w.ids) == 0 || len(w.cfg.Shares) == 0 {
			break
		}
		ev := Moved{ID: rapid.SampledFrom(w.ids).Draw(t, "mj"), Share: rapid.SampledFrom(w.cfg.Shares).Draw(t, "ms").Name,
			Priority: rapid.IntRange(0, 3).Draw(t, "mp"), Order: rapid.IntRange(-1, 1).Draw(t, "mo")}
		before, _ := w.s.Job(ev.ID)
		if w.apply(ev) == nil && before.Job.Share != ev.Share {
			w.cov.add("moved to another share")
		}
	case "swap":
		// qorder: two pending entries, often of one share (the core
		// refuses arrays, subjobs and two shares).
		if pend := w.pendingEntries(); len(pend) > 0 {
			w.apply(Swapped{A: rapid.SampledFrom(pend).Draw(t, "sa"), B: rapid.SampledFrom(pend).Draw(t, "sb")})
		}
	case "holdx":
		if pend := w.pendingEntries(); len(pend) > 0 {
			w.apply(HoldChanged{ID: rapid.SampledFrom(pend).Draw(t, "xj"), Set: rapid.Bool().Draw(t, "xset"),
				Bit: rapid.SampledFrom([]Hold{HoldAdmin, HoldSystem, HoldUser | HoldAdmin}).Draw(t, "xbit")})
		}
	case "outcome":
		w.seq++
		ev := DependencyOutcome{ID: JobID(fmt.Sprintf("o%d", w.seq)), ExitStatus: rapid.SampledFrom([]int{0, 0, 1, 271}).Draw(t, "oexit"),
			Started: rapid.IntRange(0, 3).Draw(t, "ostarted") > 0, Cancelled: rapid.IntRange(0, 4).Draw(t, "ocancelled") == 0,
			Failed: rapid.IntRange(0, 4).Draw(t, "ofailed") == 0}
		w.apply(ev)
	case "forget":
		// The spool purged finished jobs (and, now and then, a job that
		// has not ended: refused).
		var ended []JobID
		for id := range w.o.ended {
			ended = append(ended, id)
		}
		slices.Sort(ended)
		var ids []JobID
		for n := rapid.IntRange(1, 3).Draw(t, "nforget"); n > 0 && len(ended) > 0; n-- {
			ids = append(ids, rapid.SampledFrom(ended).Draw(t, "forget"))
		}
		if pend := w.pendingEntries(); len(pend) > 0 && rapid.IntRange(0, 5).Draw(t, "forgetLive") == 0 {
			ids = append(ids, rapid.SampledFrom(pend).Draw(t, "forgetLiveJob"))
		}
		if len(ids) > 0 && w.apply(Forgotten{IDs: ids}) == nil {
			for _, id := range ids {
				w.forgot[id] = true
			}
		}
	case "cancelsub":
		var subs []JobID
		for _, id := range w.ids {
			if info, ok := w.s.Job(id); ok && info.Job.Array != nil {
				for _, x := range info.Job.Array.Indices {
					subs = append(subs, subID(id, x))
				}
			}
		}
		if len(subs) > 0 && w.apply(Cancelled{ID: rapid.SampledFrom(subs).Draw(t, "csub")}) == nil {
			w.cov.add("cancel subjob index")
		}
	case "bad":
		w.badEvent()
	case "badreload":
		w.badReload()
	}
}

// badEvent applies an event the core must refuse.
func (w *world) badEvent() {
	t := w.t
	any := func(label string) JobID {
		if len(w.ids) == 0 {
			return "nosuch"
		}
		return rapid.SampledFrom(w.ids).Draw(t, label)
	}
	pick := func(ids []JobID, label string) JobID {
		if len(ids) == 0 {
			return "nosuch"
		}
		return rapid.SampledFrom(ids).Draw(t, label)
	}
	var ev Event
	switch rapid.IntRange(0, 13).Draw(t, "badEvent") {
	case 0:
		ev = Exited{ID: pick(w.pendingEntries(), "bej")}
	case 1:
		ev = PriorityChanged{ID: any("bpj"), Priority: maxPriority + 1}
		if rapid.Bool().Draw(t, "bpo") {
			ev = PriorityChanged{ID: any("bpj"), Order: MinOrder - 1}
		}
	case 2:
		ev = HoldChanged{ID: any("bhj"), Set: true, Bit: rapid.SampledFrom([]Hold{0, 8}).Draw(t, "bbit")}
	case 3:
		ev = JobAltered{ID: pick(w.jobsIn(Running, Preempting, Killing), "baj")}
	case 4:
		ev = NodeUp{Node: rapid.SampledFrom([]string{"nosuch", w.cfg.Nodes[0].Name}).Draw(t, "bun"), GPUs: -1}
	case 5:
		ev = NodeDown{Node: "nosuch"}
	case 6:
		ev = DependencyOutcome{ID: any("boj")}
	case 7:
		ev = Cancelled{ID: "nosuch"}
	case 8:
		ev = Requeued{ID: pick(w.pendingEntries(), "brj")}
	case 9:
		ev = StartFailed{ID: pick(w.pendingEntries(), "bsj")}
	case 10:
		// A restart adopting a job onto GPUs that are busy, or with
		// allocations that do not match its request.
		w.seq++
		j := Job{ID: JobID(fmt.Sprintf("j%d", w.seq)), Seq: w.seq, Share: w.cfg.Shares[0].Name, Nodes: 1, GPUsPerNode: 1}
		allocs := []Alloc{{Node: w.cfg.Nodes[0].Name, GPUs: []int{0, 1}}}
		if r := w.jobsIn(Running); len(r) > 0 {
			info, _ := w.s.Job(rapid.SampledFrom(r).Draw(t, "busy"))
			if len(info.Allocs) > 0 && len(info.Allocs[0].GPUs) > 0 {
				allocs = []Alloc{{Node: info.Allocs[0].Node, GPUs: info.Allocs[0].GPUs[:1]}}
			}
		}
		ev = Adopted{Job: j, Allocs: allocs}
	case 11:
		ev = JobAltered{ID: pick(w.pendingEntries(), "bwj"), Walltime: -time.Second}
	case 12:
		ev = DependencyOutcome{}
	case 13:
		ev = Submitted{Job: Job{ID: "bad", Share: w.cfg.Shares[0].Name, Nodes: 1, Priority: -1}}
	}
	w.apply(ev)
}

// badReload applies a configuration the core must refuse.
func (w *world) badReload() {
	cfg := cloneConfig(w.cfg)
	switch rapid.IntRange(0, 7).Draw(w.t, "badReload") {
	case 0:
		cfg.Shares = append(cfg.Shares, cfg.Shares[0])
	case 1:
		cfg.Shares[0].Partition = "nosuch"
	case 2:
		cfg.Shares[0].GPUs = -1
	case 3:
		cfg.Shares[0].BorrowLimit = -2
	case 4:
		cfg.Nodes[0].GPUs = -1
	case 5:
		cfg.Nodes = append(cfg.Nodes, cfg.Nodes[0])
	case 6:
		cfg.UsageHalfLife = time.Nanosecond
	case 7:
		cfg.Shares[0].Strategy = 7
	}
	if validate(cfg) == nil {
		w.t.Fatalf("validate accepts a bad configuration %+v", cfg)
	}
	if w.apply(ConfigReplaced{Config: cfg}) == nil {
		w.t.Fatalf("a bad configuration was installed")
	}
}

// reshape changes the shape of a configuration on a reload: shares and
// nodes removed and added, nodes' GPU counts and labels changed, a second
// partition added.
func (w *world) reshape(cfg *Config) {
	t := w.t
	c := w.cov
	if len(cfg.Shares) > 2 && rapid.IntRange(0, 5).Draw(t, "rmShare") == 0 {
		i := rapid.IntRange(0, len(cfg.Shares)-1).Draw(t, "rmShareIdx")
		cfg.Shares = slices.Delete(cfg.Shares, i, i+1)
		c.add("reload share removed")
	}
	if rapid.IntRange(0, 5).Draw(t, "addShare") == 0 {
		name := fmt.Sprintf("s%d", rapid.IntRange(0, 5).Draw(t, "addShareName"))
		if _, dup := w.shareIn(cfg, name); !dup {
			sh := Share{Name: name, Partition: "p", GPUs: rapid.IntRange(0, 6).Draw(t, "addQuota"),
				Strategy:    Strategy(rapid.IntRange(0, 2).Draw(t, "addStrategy")),
				BorrowLimit: rapid.SampledFrom([]int{Unlimited, 0, 100}).Draw(t, "addBorrow")}
			drawUserRules(t, &sh)
			cfg.Shares = append(cfg.Shares, sh)
			c.add("reload share added")
		}
	}
	if len(cfg.Nodes) > 1 && rapid.IntRange(0, 6).Draw(t, "rmNode") == 0 {
		i := rapid.IntRange(0, len(cfg.Nodes)-1).Draw(t, "rmNodeIdx")
		cfg.Nodes = slices.Delete(cfg.Nodes, i, i+1)
		c.add("reload node removed")
	}
	if rapid.IntRange(0, 6).Draw(t, "addNode") == 0 {
		w.nextNode++
		n := Node{Name: fmt.Sprintf("n%d", 10+w.nextNode), Partition: "p", GPUs: rapid.IntRange(1, 8).Draw(t, "addGPUs")}
		if rapid.Bool().Draw(t, "addLabels") {
			n.Labels = map[string]string{"gpu_type": rapid.SampledFrom(gpuTypes[:2]).Draw(t, "addType")}
		}
		if w.cpus {
			n.CPUs = rapid.SampledFrom([]int{0, 2, 8}).Draw(t, "addCPUs")
		}
		cfg.Nodes = append(cfg.Nodes, n)
		c.add("reload node added")
	}
	if rapid.IntRange(0, 6).Draw(t, "nodeGPUs") == 0 {
		i := rapid.IntRange(0, len(cfg.Nodes)-1).Draw(t, "nodeGPUsIdx")
		cfg.Nodes[i].GPUs = rapid.IntRange(1, 8).Draw(t, "newNodeGPUs")
		c.add("reload node gpus")
	}
	if rapid.IntRange(0, 6).Draw(t, "nodeLabels") == 0 {
		i := rapid.IntRange(0, len(cfg.Nodes)-1).Draw(t, "nodeLabelsIdx")
		cfg.Nodes[i].Labels = map[string]string{"gpu_type": rapid.SampledFrom(gpuTypes[:2]).Draw(t, "newType")}
		c.add("reload node labels")
	}
	if len(cfg.Partitions) == 1 && rapid.IntRange(0, 8).Draw(t, "addPart") == 0 {
		cfg.Partitions = append(cfg.Partitions, Partition{Name: "q", PreemptionRetries: Unlimited, NodeFailureRetries: Unlimited, StartFailureRetries: Unlimited})
		cfg.Nodes = append(cfg.Nodes, Node{Name: "qn0", Partition: "q", GPUs: rapid.IntRange(1, 4).Draw(t, "qGPUs")})
		cfg.Shares = append(cfg.Shares, Share{Name: "qs0", Partition: "q", GPUs: 2, Strategy: LendAndBorrow, BorrowLimit: Unlimited})
		c.add("reload partition added")
	}
	if w.topo {
		drawTopology(t, cfg, c)
	}
}

func (w *world) shareIn(cfg *Config, name string) (Share, bool) {
	for _, s := range cfg.Shares {
		if s.Name == name {
			return s, true
		}
	}
	return Share{}, false
}

// countConfig counts the knobs of a configuration.
func (w *world) countConfig(cfg Config) {
	c := w.cov
	for _, sh := range cfg.Shares {
		c.add("strategy " + sh.Strategy.String())
		if sh.Strategy == LendAndBorrow {
			if sh.BorrowLimit == Unlimited {
				c.add("borrow unlimited")
			} else {
				c.add("borrow limited")
			}
		}
		if sh.InSharePreemption {
			c.add("inshare")
		}
		if sh.FairShareUsers {
			c.add("fair users")
		}
		if sh.MaxRunningJobsPerUser > 0 {
			c.add("user job limit")
		}
		if sh.MaxGPUsPerUser > 0 {
			c.add("user gpu limit")
		}
	}
	if cfg.FairShare {
		c.add("fair share")
	} else {
		c.add("no fair share")
	}
	if cfg.FairShare && cfg.FairPreemption {
		c.add("fair preemption")
	}
	if cfg.Backfill {
		c.add("backfill")
	} else {
		c.add("no backfill")
	}
	for _, p := range cfg.Partitions {
		if p.DefaultWalltime > 0 {
			c.add("default walltime")
		}
		if p.StartFailureRetries >= 0 {
			c.add("start retries")
		}
		if p.CheckpointsLocal {
			c.add("checkpoints local")
		}
	}
	for _, n := range cfg.Nodes {
		if len(n.Labels) > 0 {
			c.add("node labels")
		}
		if n.CPUs > 0 {
			c.add("node cpus")
		}
	}
}

// coverPlan counts what a plan holds.
func (w *world) coverPlan(p Plan) {
	c := w.cov
	if len(p.Starts) > 0 {
		c.add("plan start")
	}
	for _, x := range p.Preempts {
		c.add("plan preempt")
		c.add("preempt " + x.Kind.String())
		if x.Kind == FairShare {
			c.add("plan preempt fair_share")
		}
	}
	if len(p.Requeued) > 0 {
		c.add("plan requeued")
	}
	if len(p.Finished) > 0 {
		c.add("plan finished")
	}
	if len(p.Failed) > 0 {
		c.add("plan failed")
	}
}
