package sched

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestScenarios runs every testdata/scenarios/*.txt file as a named case and
// checks each plan exactly.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := parseScenario(string(data))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, msg := range runScenario(sc) {
				t.Errorf("%s:%s", f, msg)
			}
		})
	}
}

func errKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrUnknownJob):
		return "unknown_job"
	case errors.Is(err, ErrUnknownNode):
		return "unknown_node"
	case errors.Is(err, ErrDuplicateJob):
		return "duplicate"
	case errors.Is(err, ErrInvalid):
		return "invalid"
	}
	return "other"
}

// runScenario runs a scenario and returns what did not match.
func runScenario(sc *scenario) []string {
	var bad []string
	s, err := New(sc.cfg)
	if err != nil {
		return []string{fmt.Sprintf("0: New: %v", err)}
	}
	for _, st := range sc.steps {
		at := func(format string, a ...any) {
			bad = append(bad, fmt.Sprintf("%d: %s: %s", st.line, strings.TrimSpace(st.text), fmt.Sprintf(format, a...)))
		}
		switch {
		case st.ev != nil:
			err := s.Apply(st.ev)
			if got := errKind(err); got != st.wantErr {
				at("error %q (%v), want %q", got, err, st.wantErr)
			}
		case st.schedule:
			plan := s.Schedule(st.at)
			for _, m := range comparePlan(plan, st.expects) {
				at("%s", m)
			}
			// The property tests' reason oracle holds after every pass of
			// every scenario too (not consistent(): some scenarios have a
			// node report fewer CPUs than its jobs hold).
			if err := s.reasonsTruthful(plan); err != nil {
				at("after the pass: %v", err)
			}
		case st.check != nil:
			for _, m := range runCheck(s, st.check) {
				at("%s", m)
			}
		}
	}
	return bad
}

func fmtAllocs(as []Alloc) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, a.Node+":"+fmtInts(a.GPUs))
	}
	return strings.Join(parts, ",")
}

func fmtInts(a []int) string {
	if len(a) == 0 {
		return "none"
	}
	var p []string
	for _, x := range a {
		p = append(p, strconv.Itoa(x))
	}
	return strings.Join(p, ",")
}

// comparePlan checks a plan against expectations exactly.
func comparePlan(p Plan, exp []scExpect) []string {
	var got, want []string
	for _, s := range p.Starts {
		got = append(got, fmt.Sprintf("start %s %s", s.Job, fmtAllocs(s.Allocs)))
	}
	for _, x := range p.Preempts {
		got = append(got, fmt.Sprintf("preempt %s for=%s kind=%s", x.Victim, x.For, x.Kind))
	}
	for _, rq := range p.Requeued {
		got = append(got, "requeued "+string(rq.Job))
	}
	for _, id := range p.Finished {
		got = append(got, "finished "+string(id))
	}
	for _, f := range p.Failed {
		got = append(got, fmt.Sprintf("failed %s reason=%s", f.Job, f.Reason))
	}
	var gotPending, wantPending []string
	for _, r := range p.Pending {
		gotPending = append(gotPending, fmt.Sprintf("pending %s reason=%s", r.Job, r.Reason))
	}
	order := map[string]int{"start": 0, "preempt": 1, "requeued": 2, "finished": 3, "failed": 4}
	byKind := make([][]string, 5)
	for _, e := range exp {
		var line string
		switch e.kind {
		case "start":
			line = fmt.Sprintf("start %s %s", e.job, fmtAllocs(e.alloc))
		case "preempt":
			line = fmt.Sprintf("preempt %s for=%s kind=%s", e.job, e.other, e.pk)
		case "requeued", "finished":
			line = e.kind + " " + string(e.job)
		case "failed":
			line = fmt.Sprintf("failed %s reason=%s", e.job, e.r)
		case "pending":
			wantPending = append(wantPending, fmt.Sprintf("pending %s reason=%s", e.job, e.r))
			continue
		}
		byKind[order[e.kind]] = append(byKind[order[e.kind]], line)
	}
	for _, k := range byKind {
		want = append(want, k...)
	}
	slices.Sort(gotPending)
	slices.Sort(wantPending)
	got = append(got, gotPending...)
	want = append(want, wantPending...)
	if slices.Equal(got, want) {
		return nil
	}
	return []string{fmt.Sprintf("plan mismatch\n  got:\n    %s\n  want:\n    %s",
		strings.Join(got, "\n    "), strings.Join(want, "\n    "))}
}

func holdString(h Hold) string {
	s := ""
	if h&HoldUser != 0 {
		s += "u"
	}
	if h&HoldAdmin != 0 {
		s += "o"
	}
	if h&HoldSystem != 0 {
		s += "s"
	}
	if s == "" {
		return "none"
	}
	return s
}

func runCheck(s *Scheduler, c *scCheck) []string {
	var bad []string
	cmp := func(key, got string) {
		want, ok := c.kv[key]
		if ok && key == "used" {
			if l, err := scRange(want); err == nil {
				want = fmtInts(l)
			}
		}
		if ok && key == "est_on" && want != "none" {
			var as []Alloc
			for _, on := range strings.Split(want, "+") {
				n, r, _ := strings.Cut(on, ":")
				l, _ := scRange(r)
				as = append(as, Alloc{Node: n, GPUs: l})
			}
			want = fmtAllocs(as)
		}
		if ok && want != got {
			bad = append(bad, fmt.Sprintf("%s %s: %s=%s, want %s", c.what, c.name, key, got, want))
		}
	}
	switch c.what {
	case "gone":
		if _, ok := s.Job(JobID(c.name)); ok {
			bad = append(bad, fmt.Sprintf("job %s is still in the core", c.name))
		}
	case "job":
		info, ok := s.Job(JobID(c.name))
		if !ok {
			return []string{fmt.Sprintf("job %s not found", c.name)}
		}
		cmp("state", info.State.String())
		cmp("reason", info.Reason.String())
		cmp("preemptions", strconv.Itoa(info.Job.Preemptions))
		cmp("node_failures", strconv.Itoa(info.Job.NodeFailures))
		cmp("start_failures", strconv.Itoa(info.Job.StartFailures))
		cmp("prefer", info.Job.PreferNode)
		cmp("hold", holdString(info.Job.Hold))
		cmp("prio", strconv.Itoa(info.Job.Priority))
		cmp("allocs", fmtAllocs(info.Allocs))
		var run []string
		for _, r := range info.Running {
			run = append(run, string(r))
		}
		cmp("running", strings.Join(run, ","))
		est, on := "none", "none"
		if e := info.Estimate; e != nil {
			est = strconv.Itoa(int(e.Start.Sub(scBase) / time.Second))
			on = fmtAllocs(e.Allocs)
		}
		cmp("est", est)
		cmp("est_on", on)
	case "share":
		for _, u := range s.Shares() {
			if u.Share != c.name {
				continue
			}
			cmp("inuse", strconv.Itoa(u.InUse))
			cmp("borrowed", strconv.Itoa(u.Borrowed))
			cmp("lent", strconv.Itoa(u.Lent))
			cmp("pending", strconv.Itoa(u.Pending))
			cmp("running", strconv.Itoa(u.Running))
			cmp("usage", strconv.FormatInt(int64(math.Round(s.ShareFairUsage(c.name))), 10))
			return bad
		}
		bad = append(bad, "share "+c.name+" not found")
	case "node":
		for _, n := range s.Nodes() {
			if n.Name != c.name {
				continue
			}
			cmp("used", fmtInts(n.UsedGPUs))
			cmp("up", strconv.FormatBool(n.Up))
			return bad
		}
		bad = append(bad, "node "+c.name+" not found")
	}
	return bad
}
