//go:build !unit

package e2e

import (
	"encoding/json"
	"errors"
	"os/exec"
	"os/user"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestArrayWithMaxRunning(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	// Each subjob records when it ran; %2 allows two at a time although
	// GPUs for four are free.
	c.script("sweep.sh", "echo \"$PBS_ARRAY_ID $PBS_ARRAY_INDEX $(date +%s) start\" >> sweep.log\nsleep 2\necho \"$PBS_ARRAY_INDEX $(date +%s) end\" >> sweep.log\n")
	arr := c.qsub("-q", "b", "-J", "0-5%2", "-l", "ngpus=1", "sweep.sh")
	if !strings.HasSuffix(arr, "[].e2e") {
		t.Fatalf("array id %q", arr)
	}
	c.eventually(time.Minute, func() (bool, string) {
		out, _, _ := c.runAs(alice, "qstat")
		return strings.Contains(out, " B "), out
	})
	sub, _, _ := c.runAs(alice, "qstat", "-t", "-x")
	if !strings.Contains(sub, strings.Replace(arr, "[]", "[0]", 1)) {
		t.Fatalf("qstat -t lacks subjob 0:\n%s", sub)
	}
	c.waitState(arr, "F", 60*time.Second)
	log := strings.Split(strings.TrimSpace(c.readFile("sweep.log")), "\n")
	var starts []string
	running, peak := 0, 0
	type ev struct {
		t     int
		delta int
	}
	var evs []ev
	for _, l := range log {
		f := strings.Fields(l)
		switch f[len(f)-1] {
		case "start":
			if f[0] != arr {
				t.Fatalf("PBS_ARRAY_ID %q, want %s", f[0], arr)
			}
			starts = append(starts, f[1])
			ts, _ := strconv.Atoi(f[2])
			evs = append(evs, ev{ts * 2, +1})
		case "end":
			ts, _ := strconv.Atoi(f[1])
			evs = append(evs, ev{ts*2 - 1, -1}) // ends before starts in the same second
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].t < evs[j].t })
	for _, e := range evs {
		running += e.delta
		peak = max(peak, running)
	}
	sort.Strings(starts)
	if strings.Join(starts, ",") != "0,1,2,3,4,5" {
		t.Fatalf("subjobs that ran: %v\n%s", starts, c.readFile("sweep.log"))
	}
	if peak > 2 {
		t.Fatalf("%d subjobs ran at once, %%max is 2\n%s", peak, c.readFile("sweep.log"))
	}
	// qdel of a whole array removes what is left.
	big := c.qsub("-q", "b", "-J", "0-99", "-h", "sweep.sh")
	if _, errOut, err := c.runAs(alice, "qdel", big); err != nil {
		t.Fatalf("qdel array: %v %s", err, errOut)
	}
	c.waitState(big, "F", time.Minute)
}

func TestDependenciesHoldsAndBeginTime(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("ok.sh", "echo $PBS_JOBNAME $(date +%s) >> order.log\n")
	c.script("bad.sh", "exit 1\n")
	train := c.qsub("-q", "a", "-N", "train", "-h", "ok.sh")
	eval := c.qsub("-q", "a", "-N", "eval", "-W", "depend=afterok:"+train, "ok.sh")
	failing := c.qsub("-q", "a", "-N", "failing", "bad.sh")
	never := c.qsub("-q", "a", "-N", "never", "-W", "depend=afterok:"+failing, "ok.sh")
	cleanup := c.qsub("-q", "a", "-N", "cleanup", "-W", "depend=afternotok:"+failing, "ok.sh")

	if st := c.state(eval); st != "H" && st != "Q" {
		t.Fatalf("eval state %q", st)
	}
	if got := c.field(eval, "comment"); got != "Dependency" {
		t.Fatalf("eval reason %q, want Dependency", got)
	}
	c.waitState(never, "F", 30*time.Second)
	if got := c.field(never, "comment"); got != "DependencyNeverSatisfied" {
		t.Fatalf("never reason %q", got)
	}
	c.waitState(cleanup, "F", 30*time.Second)
	if st := c.state(train); st != "H" {
		t.Fatalf("held job state %q", st)
	}
	if _, errOut, err := c.runAs(alice, "qrls", train); err != nil {
		t.Fatalf("qrls: %v %s", err, errOut)
	}
	c.waitState(eval, "F", 30*time.Second)
	order := strings.Fields(c.readFile("order.log"))
	// cleanup ran first (afternotok), then train, then eval.
	var names []string
	for i := 0; i < len(order); i += 2 {
		names = append(names, order[i])
	}
	if strings.Join(names, " ") != "cleanup train eval" {
		t.Fatalf("run order %v", names)
	}

	// qsub -a: not before a time two seconds ahead (state W until then).
	at := time.Now().Add(3 * time.Second)
	later := c.qsub("-q", "a", "-N", "later", "-a", at.Format("200601021504.05"), "ok.sh")
	// Only an answer that came before the start time must say W: on a
	// loaded machine qsub and qstat may take longer than the 3 s.
	if st := c.state(later); st != "W" && time.Now().Before(at) {
		t.Fatalf("state %q before its start time, want W", st)
	}
	c.waitState(later, "F", 30*time.Second)
	lines := strings.Split(strings.TrimSpace(c.readFile("order.log")), "\n")
	last := strings.Fields(lines[len(lines)-1])
	ts, _ := strconv.ParseInt(last[1], 10, 64)
	if last[0] != "later" || ts < at.Unix() {
		t.Fatalf("job ran at %d, not before %d expected: %v", ts, at.Unix(), last)
	}

	// qalter on a pending job; a dependency cycle is refused.
	a := c.qsub("-q", "a", "-h", "ok.sh")
	b := c.qsub("-q", "a", "-W", "depend=afterany:"+a, "ok.sh")
	if _, errOut, err := c.runAs(alice, "qalter", "-W", "depend=afterok:"+b, a); err == nil || !strings.Contains(errOut, "cycle") {
		t.Fatalf("cycle accepted: %v %s", err, errOut)
	}
	// PBS's -p is the job's PBS priority, in the user's numbers; the sharq
	// priority (the right to preempt) stays the share's default, 100.
	if _, errOut, err := c.runAs(alice, "qalter", "-p", "-512", "-N", "renamed", a); err != nil {
		t.Fatalf("qalter: %v %s", err, errOut)
	}
	if p, sp, n := c.field(a, "Priority"), c.field(a, "sharq_priority"), c.field(a, "Job_Name"); p != "-512" || sp != "100" || n != "renamed" {
		t.Fatalf("after qalter Priority %q sharq_priority %q name %q", p, sp, n)
	}
	// An admin hold is not the user's to release.
	if _, errOut, err := c.runAs(0, "qhold", b); err != nil {
		t.Fatalf("admin qhold: %v %s", err, errOut)
	}
	if _, errOut, err := c.runAs(alice, "qrls", b); err == nil {
		t.Fatalf("user released an admin hold: %s", errOut)
	}
	c.runAs(alice, "qdel", a, b)
}

func TestBlockingQsub(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("seven.sh", "exit 7\n")
	out, _, err := c.runAs(alice, "qsub", "-q", "a", "-W", "block=true", "seven.sh")
	code := -1
	if ee, ok := err.(interface{ ExitCode() int }); ok {
		code = ee.ExitCode()
	}
	if code != 7 || !strings.HasSuffix(strings.TrimSpace(out), ".e2e") {
		t.Fatalf("qsub -W block=true: exit %d (%v) out %q", code, err, out)
	}
}

// TestPBSClientForms drives jobs from submission to their end with the
// command lines PBS clients use, and reads sharq's answers with those
// clients' own rules.
func TestPBSClientForms(t *testing.T) {
	c := newCluster(t, spec{nodes: []string{"n1"}, shares: openShares})
	c.script("ok.sh", "#PBS -p 1\nsleep 3\n")
	c.script("bad.sh", "exit 3\n")
	exit := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatalf("not an exit status: %v", err)
		}
		return 0
	}

	// Cromwell writes memory as a float; #PBS -p 1 needs no admin.
	ok := c.qsub("-q", "b", "-l", "ngpus=1,mem=1.5gb", "ok.sh")
	bad := c.qsub("-q", "b", "-l", "mem=2.0gb", "bad.sh")
	// A job no node could ever run is refused, as PBS's qsub does.
	if _, errOut, err := c.runAs(alice, "qsub", "-q", "b", "-l", "ngpus=99", "ok.sh"); exit(err) != 188 ||
		!strings.HasPrefix(errOut, "qsub: Job violates queue and/or server resource limits") {
		t.Fatalf("qsub -l ngpus=99: exit %d, %q", exit(err), errOut)
	}

	// JupyterHub batchspawner 1.3 (batchspawner.py, PBSSpawner):
	// qstat -fx ID, state_exechost_re = r'exec_host = ([\w_-]+)/'.
	c.waitState(ok, "R", time.Minute)
	out, errOut, err := c.runAs(alice, "qstat", "-fx", ok)
	if m := regexp.MustCompile(`exec_host = ([\w_-]+)/`).FindStringSubmatch(out); err != nil || m == nil || m[1] != "n1" {
		t.Fatalf("qstat -fx %s: %v %s\n%s", ok, err, errOut, out)
	}
	if p, sp := c.field(ok, "Priority"), c.field(ok, "sharq_priority"); p != "1" || sp != "100" {
		t.Errorf("Priority %q sharq_priority %q, want 1 and the share's default 100", p, sp)
	}
	if m := c.field(ok, "Resource_List.mem"); m != "1536mb" {
		t.Errorf("Resource_List.mem %q, want 1536mb", m)
	}
	// Parsl (parsl/providers/pbspro/pbspro.py): qstat -f -F json, then
	// json.loads(...)["Jobs"][id]["job_state"].
	out, errOut, err = c.runAs(alice, "qstat", "-f", "-F", "json", ok)
	var doc struct {
		Jobs map[string]struct {
			State string `json:"job_state"`
			Queue string `json:"queue"`
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &doc) != nil || doc.Jobs[ok].State != "R" || doc.Jobs[ok].Queue != "b" {
		t.Fatalf("qstat -f -F json %s: %v %s\n%s", ok, err, errOut, out)
	}
	// Nextflow: qstat -f QUEUE takes the share as a destination.
	if out, errOut, err := c.runAs(alice, "qstat", "-f", "b"); err != nil || !strings.Contains(out, "Job Id: "+ok) {
		t.Fatalf("qstat -f b: %v %s\n%s", err, errOut, out)
	}

	// qselect prints ids for scripts; pbsnodes shows the node as PBS does.
	owner, err := user.LookupId(strconv.Itoa(alice))
	must(t, err)
	if out, errOut, err := c.runAs(alice, "qselect", "-q", "b", "-s", "R", "-u", owner.Username); err != nil || !strings.Contains(out, ok+"\n") {
		t.Errorf("qselect -q b -s R -u %s: %v %s\n%s", owner.Username, err, errOut, out)
	}
	out, errOut, err = c.runAs(alice, "pbsnodes", "-a", "-F", "json")
	var nodes struct {
		Nodes map[string]struct {
			State     string         `json:"state"`
			Jobs      string         `json:"jobs"`
			Available map[string]any `json:"resources_available"`
		} `json:"nodes"`
	}
	if err != nil || json.Unmarshal([]byte(out), &nodes) != nil || nodes.Nodes["n1"].State != "free" ||
		nodes.Nodes["n1"].Available["ngpus"] != float64(8) || !strings.Contains(nodes.Nodes["n1"].Jobs, ok+"/0") {
		t.Errorf("pbsnodes -a -F json: %v %s\n%s", err, errOut, out)
	}
	if out, errOut, err := c.runAs(alice, "pbsnodes", "-l"); err != nil || out != "" {
		t.Errorf("pbsnodes -l with every node up: %v %s\n%q", err, errOut, out)
	}

	c.waitState(ok, "F", time.Minute)
	c.waitState(bad, "F", time.Minute)
	if out, errOut, err := c.runAs(alice, "qselect", "-x", "-sF", "-N", "bad.sh"); err != nil || out != bad+"\n" {
		t.Errorf("qselect -x -s F -N bad.sh: %v %s\n%q", err, errOut, out)
	}
	// Cromwell checks qstat ID's exit status: 35 for a finished job, 153
	// for an unknown one (OpenPBS's).
	if _, errOut, err := c.runAs(alice, "qstat", bad); exit(err) != 35 ||
		errOut != "qstat: "+bad+" Job has finished, use -x or -H to obtain historical job information\n" {
		t.Errorf("qstat %s (finished): exit %d, %q", bad, exit(err), errOut)
	}
	if _, errOut, err := c.runAs(alice, "qstat", "999999"); exit(err) != 153 || errOut != "qstat: Unknown Job Id 999999\n" {
		t.Errorf("qstat 999999: exit %d, %q", exit(err), errOut)
	}
	// Snakemake status scripts: qstat -xf ID, job_state and Exit_status.
	out, _, err = c.runAs(alice, "qstat", "-xf", bad)
	if err != nil || !strings.Contains(out, "    job_state = F\n") || !strings.Contains(out, "    Exit_status = 3\n") {
		t.Errorf("qstat -xf %s: %v\n%s", bad, err, out)
	}
}
