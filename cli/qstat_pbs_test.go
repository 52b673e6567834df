package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// pbsController answers as sharqctld does: named jobs (finished ones only
// with Finished), unknown ones refused, listings without finished jobs
// unless Finished.
func pbsController(t *testing.T, ts *testSys) {
	t.Helper()
	ts.rec.reply = func(req api.Request) (*api.Response, error) {
		switch req.Op {
		case api.OpShares:
			return &api.Response{V: 1, Shares: sampleShares()}, nil
		case api.OpConfig:
			return &api.Response{V: 1, Text: labConfig}, nil
		case api.OpStat:
		default:
			t.Errorf("unexpected request %+v", req)
			return &api.Response{V: 1}, nil
		}
		f := req.Stat
		var jobs []api.Job
		for _, j := range sampleJobs() {
			switch {
			case len(f.IDs) > 0:
				if !slices.ContainsFunc(f.IDs, func(id string) bool { return id == j.ID || id+".lab" == j.ID }) {
					continue
				}
			case j.State == api.StateFinished && !f.Finished,
				j.ArrayParent != "" && !f.Subjobs,
				f.User != "" && j.Owner.User != f.User:
				continue
			}
			jobs = append(jobs, j)
		}
		for _, id := range f.IDs {
			if !slices.ContainsFunc(jobs, func(j api.Job) bool { return id == j.ID || id+".lab" == j.ID }) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "unknown job " + id, ID: id}})
			}
		}
		return &api.Response{V: 1, Jobs: jobs}, nil
	}
}

// labConfig is the configuration sharqctld sends for OpConfig.
const labConfig = `[cluster]
name = "lab"
default_share = "vision"

[[partition]]
name = "a100"
nodes = "gpu01"

[[node]]
names = "gpu01"
gpus = 8

[[share]]
name = "vision"
partition = "a100"
gpus = 8
users = ["*"]
`

func runPBS(t *testing.T, args ...string) (*testSys, int) {
	t.Helper()
	ts := newTestSys(t)
	pbsController(t, ts)
	code := Qstat(context.Background(), append([]string{"qstat"}, args...), ts.Sys)
	return ts, code
}

// jobIDsIn are the job ids a qstat table shows, in order.
func jobIDsIn(out string) []string {
	var ids []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[0][0] >= '0' && f[0][0] <= '9' {
			ids = append(ids, f[0])
		}
	}
	return ids
}

func TestQstatCombinedFlags(t *testing.T) {
	tests := []struct{ combined, separate []string }{
		{[]string{"-fx", "99"}, []string{"-f", "-x", "99"}},
		{[]string{"-xf", "99"}, []string{"-x", "-f", "99"}},
		{[]string{"-an1"}, []string{"-a", "-n", "-1"}},
		{[]string{"-fFjson", "101"}, []string{"-f", "-F", "json", "101"}},
		{[]string{"-xtu", "carol"}, []string{"-x", "-t", "-u", "carol"}},
		{[]string{"-ns1", "vision"}, []string{"-n", "-s", "-1", "vision"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.combined, " "), func(t *testing.T) {
			a, ca := runPBS(t, tt.combined...)
			b, cb := runPBS(t, tt.separate...)
			if ca != 0 || cb != 0 || a.out.Len() == 0 {
				t.Fatalf("exit %d and %d, stderr %q %q", ca, cb, a.err, b.err)
			}
			if a.out.String() != b.out.String() {
				t.Errorf("%q shows\n%s\n%q shows\n%s", tt.combined, a.out, tt.separate, b.out)
			}
		})
	}
}

func TestQstatPBSOptions(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		ids      []string // the rows, in order
		contains []string // in stdout
		absent   []string
	}{
		{name: "share destination", args: []string{"vision"}, ids: []string{"101.lab", "103[].lab", "104.lab"}},
		{name: "share@server", args: []string{"nlp@lab"}, ids: []string{"102.lab"}},
		{name: "@server is all", args: []string{"@lab"}, ids: []string{"101.lab", "102.lab", "103[].lab", "104.lab", "105.lab", "123456789012345*"}},
		{name: "job and share", args: []string{"105", "nlp"}, ids: []string{"105.lab", "102.lab"}},
		{name: "a subjob named without -t", args: []string{"103[4]", "103[6].lab"}, ids: []string{"103[4].lab", "103[6].lab"}},
		{name: "user filters named jobs", args: []string{"-u", "bob", "101", "102"}, ids: []string{"102.lab"}},
		{name: "full of a share", args: []string{"-f", "nlp"}, contains: []string{"Job Id: 102.lab", "queue = nlp"}, absent: []string{"Job Id: 101.lab"}},
		{name: "i: not running", args: []string{"-i"}, ids: []string{"102.lab", "104.lab", "105.lab", "12345678901234*"}},
		{name: "r: running", args: []string{"-r", "-t"}, ids: []string{"101.lab", "103[4].lab"}},
		{name: "H: finished only", args: []string{"-H"}, ids: []string{"99.lab", "98.lab"}},
		{name: "J: arrays", args: []string{"-J"}, ids: []string{"103[].lab"}},
		{name: "J t: arrays and subjobs", args: []string{"-J", "-t"}, ids: []string{"103[].lab", "103[4].lab", "103[6].lab"}},
		{name: "u: alternative table", args: []string{"-u", "alice"}, ids: []string{"101.lab", "104.lab"}, contains: []string{"Username", "Reason"}},
		{name: "p: percent done", args: []string{"-p", "-x", "101", "102", "103[]", "99"}, contains: []string{"% done", "       8 R vision", "      -- Q nlp", "      -- B vision", "     100 F vision"}},
		{name: "s: comments under rows", args: []string{"-s", "102"}, contains: []string{"QuotaExhausted\n   QuotaExhausted\n"}},
		{name: "1: on the row", args: []string{"-n", "-s", "-1", "102", "101"}, contains: []string{"QuotaExhausted --   QuotaExhausted\n", "01:00 gpu01/0-3+gpu02/4-7\n"}},
		{name: "G: gigabytes", args: []string{"-G", "102", "101"}, contains: []string{"  128gb 12:00", "    2gb    --"}},
		{name: "M: megawords", args: []string{"-M", "102"}, contains: []string{"  192mw    --"}},
		{name: "w: nothing cut", args: []string{"-w"}, contains: []string{"123456789012345678.verylongcluster", "hyperparameter-sweep-final", "a-share-with-a-long-name"}, absent: []string{"*"}},
		{name: "B: server", args: []string{"-B"}, contains: []string{"Server             Max   Tot   Que   Run   Hld   Wat   Trn   Ext Status\n", "lab                  0     6     1     2     1     1     0     1 Active\n"}},
		{name: "Q f: queue attributes", args: []string{"-Qf", "vision"}, contains: []string{"Queue: vision\n", "    total_jobs = 8\n", "    resources_assigned.ngpus = 20\n", "    gpus_borrowed = 4\n", "    enabled = True\n"}, absent: []string{"Queue: nlp"}},
		{name: "B f: server attributes", args: []string{"-B", "-f"}, contains: []string{"Server: lab\n", "    default_queue = vision\n", "    state_count = Transit:0 Queued:1 Held:1 Waiting:1 Running:1 Exiting:1 Begun:1\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, code := runPBS(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, ts.err)
			}
			out := ts.out.String()
			if tt.ids != nil && !slices.Equal(jobIDsIn(out), tt.ids) {
				t.Errorf("rows %q, want %q\n%s", jobIDsIn(out), tt.ids, out)
			}
			for _, s := range tt.contains {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestQstatPBSExits(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		stdout string
	}{
		{"unknown job", []string{"999"}, ExitUnknownJob, "qstat: Unknown Job Id 999\n", ""},
		{"unknown job full", []string{"-f", "999.lab"}, ExitUnknownJob, "qstat: Unknown Job Id 999.lab\n", ""},
		{"finished without -x", []string{"99"}, ExitFinishedJob, "qstat: 99.lab Job has finished, use -x or -H to obtain historical job information\n", ""},
		{"finished, full, without -x", []string{"-f", "99.lab"}, ExitFinishedJob, "qstat: 99.lab Job has finished, use -x or -H to obtain historical job information\n", ""},
		{"finished and running", []string{"99", "101"}, ExitFinishedJob, "Job has finished", "101.lab"},
		{"finished with -x", []string{"-x", "99"}, ExitOK, "", "99.lab"},
		{"finished with -H", []string{"-H", "99"}, ExitOK, "", "99.lab"},
		{"unknown queue", []string{"nope"}, ExitUnknownQueue, "qstat: Unknown queue nope\n", ""},
		{"unknown queue -Q", []string{"-Q", "nope@lab"}, ExitUnknownQueue, "qstat: Unknown queue nope\n", ""},
		{"bad destination", []string{"a@b@c"}, ExitUsage, "illegally formed destination: a@b@c", ""},
		{"G and M", []string{"-GM"}, ExitUsage, "-G and -M do not go together", ""},
		{"1 alone", []string{"-1"}, ExitUsage, "-1 goes with -n or -s", ""},
		{"w and F", []string{"-fw", "-F", "json"}, ExitUsage, "option w cannot be used with -F", ""},
		{"B and Q", []string{"-BQ"}, ExitUsage, "-B and -Q do not go together", ""},
		{"a and i", []string{"-ai"}, ExitUsage, "-a and -i do not go together", ""},
		{"F without f", []string{"-F", "json"}, ExitUsage, "-F json goes with -f", ""},
		{"bad format", []string{"-f", "-F", "xml"}, ExitUsage, "the formats are json, dsv and sharq-json", ""},
		{"D without dsv", []string{"-f", "-D", ","}, ExitUsage, "-D goes with -F dsv", ""},
		{"unknown letter", []string{"-fZ"}, ExitUsage, "flag provided but not defined: -fZ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, code := runPBS(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if tt.code == ExitUsage && len(ts.rec.reqs) > 0 {
				t.Error("a usage error sent a request")
			}
			if !strings.Contains(ts.err.String(), tt.stderr) || tt.stderr == "" && ts.err.Len() > 0 {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
			if !strings.Contains(ts.out.String(), tt.stdout) {
				t.Errorf("stdout = %q, want %q", ts.out, tt.stdout)
			}
			if strings.Contains(ts.out.String(), "99.lab") && tt.code == ExitFinishedJob {
				t.Errorf("a finished job shown without -x:\n%s", ts.out)
			}
		})
	}
}

// TestQstatClientsParse reads qstat's output with the rules PBS clients
// apply to it.
func TestQstatClientsParse(t *testing.T) {
	// Parsl 2024.x, parsl/providers/pbspro/pbspro.py: json.loads(stdout),
	// then ["Jobs"][job_id]["job_state"] (and Exit_status once F).
	ts, code := runPBS(t, "-f", "-F", "json", "-x", "101", "99")
	if code != 0 {
		t.Fatalf("exit %d %s", code, ts.err)
	}
	var doc struct {
		Timestamp  int64                     `json:"timestamp"`
		PBSVersion string                    `json:"pbs_version"`
		PBSServer  string                    `json:"pbs_server"`
		Jobs       map[string]map[string]any `json:"Jobs"`
	}
	if err := json.Unmarshal(ts.out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, ts.out)
	}
	if doc.Timestamp != testNow.Unix() || doc.PBSServer != "lab" || doc.PBSVersion == "" {
		t.Errorf("envelope %d %q %q", doc.Timestamp, doc.PBSVersion, doc.PBSServer)
	}
	for id, want := range map[string]string{"101.lab": "R", "99.lab": "F"} {
		if got := doc.Jobs[id]["job_state"]; got != want {
			t.Errorf("Jobs[%s].job_state = %v, want %s", id, got, want)
		}
	}
	if st, ok := doc.Jobs["99.lab"]["Exit_status"].(float64); !ok || st != 0 {
		t.Errorf("Exit_status %v", doc.Jobs["99.lab"]["Exit_status"])
	}
	rl, _ := doc.Jobs["101.lab"]["Resource_List"].(map[string]any)
	if rl["ngpus"] != float64(8) || rl["mem"] != "128gb" || rl["walltime"] != "12:00:00" {
		t.Errorf("Resource_List %v", rl)
	}
	if vl, _ := doc.Jobs["101.lab"]["Variable_List"].(map[string]any); vl["PBS_O_WORKDIR"] != "/home/alice/exp" || vl["OPTS"] != "a,b" {
		t.Errorf("Variable_List %v", vl)
	}

	// JupyterHub batchspawner 1.3, batchspawner.py PBSSpawner:
	// state_exechost_re = r'exec_host = ([\w_-]+)/' over qstat -fx ID.
	exechost := regexp.MustCompile(`exec_host = ([\w_-]+)/`)
	for id, host := range map[string]string{"101": "gpu01", "99": "gpu04", "123456789012345678.verylongcluster": "cpu01"} {
		ts, code := runPBS(t, "-fx", id)
		m := exechost.FindStringSubmatch(ts.out.String())
		if code != 0 || m == nil || m[1] != host {
			t.Errorf("qstat -fx %s: exit %d, exec_host match %q, want %s", id, code, m, host)
		}
	}
	ts, _ = runPBS(t, "-fx", "101")
	for _, want := range []string{
		"    exec_host = gpu01/0*16+gpu02/0*16\n",
		"    exec_vnode = (gpu01:ncpus=16:ngpus=4:mem=64gb)+(gpu02:ncpus=16:ngpus=4:mem=64gb)\n",
		"    exec_gpus = gpu01/0-3+gpu02/4-7\n",
		"    ctime = Sun Mar  1 09:00:00 2026\n",
	} {
		if !strings.Contains(ts.out.String(), want) {
			t.Errorf("qstat -fx 101 lacks %q", want)
		}
	}

	// Nextflow 24.x, PbsProExecutor.queueStatusCommand: qstat -f, over the
	// servers of qstat -B (lines not starting with Server or ---, "@"$1),
	// then grep -E '(Job Id:|job_state =)'.
	ts, code = runPBS(t, "-B")
	var servers []string
	for _, l := range strings.Split(strings.TrimSpace(ts.out.String()), "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "Server") && !strings.HasPrefix(l, "---") {
			servers = append(servers, "@"+f[0])
		}
	}
	ts, code2 := runPBS(t, append([]string{"-f"}, servers...)...)
	states := map[string]string{}
	id := ""
	for _, l := range strings.Split(ts.out.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "Job Id: "); ok {
			id = v
		} else if v, ok := strings.CutPrefix(strings.TrimSpace(l), "job_state = "); ok {
			states[id] = v
		}
	}
	if code != 0 || code2 != 0 || !slices.Equal(servers, []string{"@lab"}) || states["101.lab"] != "R" || states["102.lab"] != "Q" || len(states) != 6 {
		t.Errorf("Nextflow's poll: exit %d %d, servers %q, states %v", code, code2, servers, states)
	}

	// Snakemake cluster-status scripts: qstat -fx ID, then job_state.
	ts, code = runPBS(t, "-fx", "98")
	if code != 0 || !strings.Contains(ts.out.String(), "    job_state = F\n") || !strings.Contains(ts.out.String(), "    Exit_status = 3\n") {
		t.Errorf("qstat -fx 98: exit %d\n%s", code, ts.out)
	}

	// DSV: one line per job, attributes split by the delimiter.
	ts, code = runPBS(t, "-f", "-F", "dsv", "-D", ";", "101")
	lines := strings.Split(strings.TrimSuffix(ts.out.String(), "\n"), "\n")
	if code != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "Job Id: 101.lab;Job_Name=train-resnet;") ||
		!strings.Contains(lines[0], ";job_state=R;") || !strings.Contains(lines[0], ";Resource_List.ngpus=8;") {
		t.Errorf("qstat -f -F dsv: exit %d\n%s", code, ts.out)
	}

	// sharq's own records stay behind -F sharq-json.
	ts, code = runPBS(t, "-f", "-F", "sharq-json", "101")
	var own struct{ Jobs map[string]api.Job }
	if err := json.Unmarshal(ts.out.Bytes(), &own); code != 0 || err != nil || own.Jobs["101.lab"].Share != "vision" {
		t.Errorf("-F sharq-json: exit %d, %v\n%s", code, err, ts.out)
	}

	// qstat -Q -f -F json: OpenPBS's Queue object.
	ts, code = runPBS(t, "-Qf", "-F", "json")
	var qs struct {
		Server string `json:"pbs_server"`
		Queue  map[string]map[string]any
	}
	if err := json.Unmarshal(ts.out.Bytes(), &qs); code != 0 || err != nil || qs.Server != "lab" || qs.Queue["nlp"]["gpus_lent"] != float64(4) ||
		qs.Queue["scratch"]["enabled"] != "False" || qs.Queue["vision"]["resources_assigned"].(map[string]any)["ngpus"] != float64(20) {
		t.Errorf("qstat -Q -f -F json: exit %d, %v\n%s", code, err, ts.out)
	}

	// qstat -B -f -F json.
	ts, code = runPBS(t, "-Bf", "-F", "json")
	var srv struct {
		Server map[string]map[string]any
	}
	if err := json.Unmarshal(ts.out.Bytes(), &srv); code != 0 || err != nil || srv.Server["lab"]["total_jobs"] != float64(6) {
		t.Errorf("qstat -B -f -F json: exit %d, %v\n%s", code, err, ts.out)
	}
}

func TestQstatJSONHostileValues(t *testing.T) {
	ts := newTestSys(t)
	j := sampleJobs()[0]
	j.Name = "12"
	j.Reason = "a\"b\\c\nd"
	j.Env = map[string]string{"N": "007", "X": "1e3", "Q": "\"}"}
	ts.rec.reply = func(api.Request) (*api.Response, error) { return &api.Response{V: 1, Jobs: []api.Job{j}}, nil }
	if code := Qstat(context.Background(), []string{"qstat", "-f", "-F", "json", "101"}, ts.Sys); code != 0 {
		t.Fatalf("exit %d %s", code, ts.err)
	}
	var doc struct{ Jobs map[string]map[string]any }
	if err := json.Unmarshal(ts.out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, ts.out)
	}
	got := doc.Jobs["101.lab"]
	vl, _ := got["Variable_List"].(map[string]any)
	if got["Job_Name"] != "12" || got["comment"] != j.Reason || vl["N"] != "007" || vl["X"] != float64(1000) || vl["Q"] != "\"}" {
		t.Errorf("values %v", got)
	}
}
