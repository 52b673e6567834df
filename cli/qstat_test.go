package cli

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

func at(h, m int) time.Time { return time.Date(2026, 3, 1, h, m, 0, 0, time.UTC) }

// sampleJobs covers every state and the columns' edge cases.
func sampleJobs() []api.Job {
	zero, three := 0, 3
	return []api.Job{
		{
			ID: "101.lab", Seq: 101, Name: "train-resnet", Owner: api.Owner{User: "alice", UID: 1000}, Share: "vision", Partition: "a100",
			Priority: 10, WorkDir: "/home/alice/exp", Stdout: "/home/alice/exp/train-resnet.o101", Stderr: "/home/alice/exp/train-resnet.o101", Join: "oe",
			Env:       map[string]string{"PBS_O_WORKDIR": "/home/alice/exp", "PBS_O_HOST": "login1", "OPTS": "a,b"},
			Resources: api.Resources{Nodes: 2, GPUsPerNode: 4, CPUsPerNode: 16, MemPerNode: 64 << 30, Walltime: 12 * time.Hour, MPIProcs: 2, OMPThreads: 8, Labels: map[string]string{"gpu_type": "a100"}},
			Image:     "pytorch:24.05", Grace: 5 * time.Minute,
			State: api.StateRunning, Allocs: []api.Alloc{{Node: "gpu01", GPUs: []int{3, 2, 1, 0}}, {Node: "gpu02", GPUs: []int{4, 5, 6, 7}}},
			Preemptions: 1, NodeFailures: 2, SubmitTime: at(9, 0), StartTime: at(11, 0), Used: time.Hour + 2*time.Minute + 3*time.Second,
			History: []api.HistoryEntry{
				{Time: at(9, 0), State: api.StateQueued, What: "submitted"},
				{Time: at(9, 5), State: api.StateRunning, What: "started on gpu01 [0 1 2 3], gpu02 [4 5 6 7]"},
				{Time: at(10, 0), State: api.StateQueued, What: "preempted for 100.lab (cross_share)"},
				{Time: at(11, 0), State: api.StateRunning, What: "started on gpu01 [0 1 2 3], gpu02 [4 5 6 7]"},
			},
		},
		{
			ID: "102.lab", Seq: 102, Name: "hyperparameter-sweep-final", Owner: api.Owner{User: "bob"}, Share: "nlp", Partition: "a100",
			Resources: api.Resources{Nodes: 1, GPUsPerNode: 8, MemPerNode: 1536 << 20}, State: api.StateQueued, Reason: "QuotaExhausted",
			Estimated:  &api.Estimated{StartTime: at(13, 30), Allocs: []api.Alloc{{Node: "gpu03", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}},
			SubmitTime: at(10, 0), Deps: []api.Dep{{Type: jobid.AfterOK, On: "101.lab"}, {Type: jobid.AfterAny, On: "100.lab"}},
			Command: []string{"python", "train.py", "--name", "it's"},
		},
		{
			ID: "103[].lab", Seq: 103, Name: "sweep", Owner: api.Owner{User: "carol"}, Share: "vision", Partition: "a100",
			Resources: api.Resources{Nodes: 1, GPUsPerNode: 1, Walltime: 30 * time.Minute}, State: api.StateArray,
			ArrayIndices: indices("0-99:2"), ArrayMax: 10, SubmitTime: at(10, 30), StartTime: at(10, 45),
			ArrayStates: &api.ArrayStates{Queued: 46, Running: 1, Expired: 3},
		},
		{
			ID: "103[4].lab", Seq: 103, Name: "sweep", Owner: api.Owner{User: "carol"}, Share: "vision", Partition: "a100",
			Resources: api.Resources{Nodes: 1, GPUsPerNode: 1, Walltime: 30 * time.Minute}, State: api.StateRunning,
			ArrayParent: "103[].lab", ArrayIndex: 4, Allocs: []api.Alloc{{Node: "gpu03", GPUs: []int{5}}},
			SubmitTime: at(10, 30), StartTime: at(11, 50), Used: 10 * time.Minute,
		},
		{
			ID: "103[6].lab", Seq: 103, Name: "sweep", Owner: api.Owner{User: "carol"}, Share: "vision", Partition: "a100",
			Resources: api.Resources{Nodes: 1, GPUsPerNode: 1, Walltime: 30 * time.Minute}, State: api.StateQueued,
			ArrayParent: "103[].lab", ArrayIndex: 6, SubmitTime: at(10, 30), Reason: "ArrayTaskLimit",
		},
		{
			ID: "104.lab", Seq: 104, Name: "eval", Owner: api.Owner{User: "alice"}, Share: "vision", Hold: "u", State: api.StateHeld,
			Reason: "Held", Resources: api.Resources{Nodes: 1, GPUsPerNode: 2}, SubmitTime: at(11, 0),
		},
		{
			ID: "105.lab", Seq: 105, Name: "nightly", Owner: api.Owner{User: "dave"}, Share: "research", State: api.StateWaiting,
			Reason: "BeginTime", NotBefore: at(23, 30), Resources: api.Resources{Nodes: 1}, SubmitTime: at(11, 30),
		},
		{
			ID: "99.lab", Seq: 99, Name: "prep", Owner: api.Owner{User: "alice"}, Share: "vision", State: api.StateFinished,
			ExitStatus: &zero, Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, SubmitTime: at(8, 0), StartTime: at(8, 1),
			EndTime: at(8, 31), Used: 30 * time.Minute, Allocs: []api.Alloc{{Node: "gpu04", GPUs: []int{0}}},
		},
		{
			ID: "98.lab", Seq: 98, Name: "broken", Owner: api.Owner{User: "erin"}, Share: "nlp", State: api.StateFinished,
			ExitStatus: &three, Reason: "PreemptionRetriesExhausted", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1},
			SubmitTime: at(7, 0), StartTime: at(7, 10), EndTime: at(7, 20), Used: 20 * time.Minute,
		},
		{
			ID: "123456789012345678.verylongcluster", Seq: 123456789012345678, Name: "x", Owner: api.Owner{User: "averyveryverylongusername"},
			Share: "a-share-with-a-long-name", State: api.StateExiting, Resources: api.Resources{Nodes: 1},
			SubmitTime: at(11, 0), StartTime: at(11, 1), Allocs: []api.Alloc{{Node: "cpu01"}},
		},
	}
}

func sampleShares() []api.ShareStatus {
	return []api.ShareStatus{
		{Name: "vision", Partition: "a100", Strategy: "LEND_AND_BORROW", State: "ENABLED", BorrowLimit: 50, Quota: 16, InUse: 20, Borrowed: 4, Pending: 3, Running: 5, Preemptions: 2},
		{Name: "nlp", Partition: "a100", Strategy: "LEND", State: "ENABLED", Quota: 16, InUse: 8, Lent: 4, Pending: 1, Running: 1},
		{Name: "research", Partition: "a100", Strategy: "RESERVE", State: "ENABLED", Quota: 8, InUse: 0},
		{Name: "scratch", Partition: "h100-long-name", Strategy: "LEND_AND_BORROW", State: "DISABLED", BorrowLimit: -1, Quota: 4, InUse: 6, Borrowed: 2, Preemptions: 7},
	}
}

func sampleNodes() []api.NodeStatus {
	return []api.NodeStatus{
		{Name: "gpu01", Partition: "a100", State: "up", GPUs: 8, UsedGPUs: []int{3, 0, 1, 2}, Inventory: &api.Inventory{Source: "nvml", Checkpoint: &api.CheckpointFS{Root: "/ckpt", Type: "nfs", Marker: "5f0c2a9e41d7b3aa"}}, LastSeen: at(11, 59)},
		{Name: "gpu02", Partition: "a100", State: "drained", GPUs: 8, UsedGPUs: []int{4, 5, 6, 7}, Inventory: &api.Inventory{Source: "config"}, LastSeen: at(11, 59)},
		{Name: "gpu03", Partition: "a100", State: "down", GPUs: 8, Problems: []string{"NVML reports 7 GPUs, config says 8", "no heartbeat for 2m"}},
	}
}

func runQstat(t *testing.T, terminal bool, args ...string) (*testSys, int) {
	t.Helper()
	ts := newTestSys(t)
	ts.Terminal, ts.Color = terminal, terminal
	ts.rec.reply = func(req api.Request) (*api.Response, error) {
		switch req.Op {
		case api.OpStat:
			return &api.Response{V: 1, Jobs: sampleJobs()}, nil
		case api.OpShares:
			return &api.Response{V: 1, Shares: sampleShares()}, nil
		}
		t.Errorf("unexpected request %+v", req)
		return &api.Response{V: 1}, nil
	}
	code := Qstat(context.Background(), append([]string{"qstat"}, args...), ts.Sys)
	return ts, code
}

func TestQstatGolden(t *testing.T) {
	tests := []struct {
		file     string
		args     []string
		terminal bool
	}{
		{"qstat.txt", nil, false},
		{"qstat.term.txt", nil, true},
		{"qstat_t.txt", []string{"-t"}, false},
		{"qstat_n.txt", []string{"-n"}, false},
		{"qstat_a.txt", []string{"-a"}, false},
		{"qstat_a.term.txt", []string{"-a"}, true},
		{"qstat_an.txt", []string{"-a", "-n", "-t"}, false},
		{"qstat_f.txt", []string{"-f", "-t"}, false},
		{"qstat_f.json", []string{"-f", "-F", "json"}, false},
		{"qstat_T.txt", []string{"-T"}, false},
		{"qstat_T.term.txt", []string{"-T", "-t"}, true},
		{"qstat_Q.txt", []string{"-Q"}, false},
		{"qstat_Q.term.txt", []string{"-Q"}, true},
		{"qstat_Q_nlp.txt", []string{"-Q", "nlp"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ts, code := runQstat(t, tt.terminal, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, ts.err)
			}
			out := ts.out.String()
			if !tt.terminal && strings.ContainsAny(out, "\t\x1b") {
				t.Errorf("plain output has tabs or escapes:\n%s", out)
			}
			golden(t, tt.file, out)
		})
	}
}

func TestQstatRequest(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want api.StatFilter
	}{
		{"all", nil, api.StatFilter{Summary: true}},
		{"flags", []string{"-x", "-t", "-u", "alice"}, api.StatFilter{User: "alice", Finished: true, Subjobs: true, Summary: true}},
		{"ids", []string{"101", "103[2-3].lab", "104[]"}, api.StatFilter{IDs: []string{"101", "103[2].lab", "103[3].lab", "104[]"}, Finished: true, Summary: true}},
		{"user list", []string{"-u", "alice,bob"}, api.StatFilter{Summary: true}},
		{"full", []string{"-f"}, api.StatFilter{Full: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, code := runQstat(t, false, tt.args...)
			if code != 0 && code != ExitFinishedJob || len(ts.rec.reqs) != 1 { // (the fake answers finished jobs to any ids)
				t.Fatalf("exit %d, %d requests, stderr %q", code, len(ts.rec.reqs), ts.err)
			}
			req := ts.rec.reqs[0]
			if req.Op != api.OpStat || req.Stat == nil || !reflect.DeepEqual(*req.Stat, tt.want) {
				t.Errorf("request %+v, want stat %+v", req, tt.want)
			}
		})
	}
}

func TestQstatUserList(t *testing.T) {
	ts, code := runQstat(t, false, "-u", "bob,dave")
	if code != 0 {
		t.Fatal(code)
	}
	out := ts.out.String()
	if !strings.Contains(out, "102.lab") || !strings.Contains(out, "105.lab") || strings.Contains(out, "alice") {
		t.Errorf("-u bob,dave shows:\n%s", out)
	}
}

func TestQstatErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		reply  *api.Response
		code   int
		stdout string // substring
		stderr string
	}{
		{name: "unknown job", args: []string{"999"}, code: ExitUnknownJob, stderr: "qstat: Unknown Job Id 999\n",
			reply: &api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "unknown job 999.lab"}}},
		{name: "some unknown", args: []string{"101", "998", "999"}, code: ExitUnknownJob, stdout: "101.lab",
			stderr: "qstat: Unknown Job Id 998.lab\nqstat: Unknown Job Id 999.lab\n",
			reply: &api.Response{Jobs: sampleJobs()[:1], Error: &api.Error{Code: api.CodeUnknownJob, Message: "2 unknown jobs"},
				Errors: []api.Error{{Code: api.CodeUnknownJob, ID: "998.lab"}, {Code: api.CodeUnknownJob, ID: "999.lab"}}}},
		{name: "F without f", args: []string{"-F", "json"}, code: ExitUsage, stderr: "-F json goes with -f"},
		{name: "bad format", args: []string{"-f", "-F", "xml"}, code: ExitUsage, stderr: "the formats are json, dsv and sharq-json"},
		{name: "a and f", args: []string{"-a", "-f"}, code: ExitUsage, stderr: "do not go together"},
		{name: "T and f", args: []string{"-T", "-f"}, code: ExitUsage, stderr: "-T and -f do not go together"},
		{name: "bad range", args: []string{"5[9-1]"}, code: ExitUsage, stderr: "start is after end"},
		{name: "unknown share", args: []string{"-Q", "nope"}, code: ExitUnknownQueue, stderr: "qstat: Unknown queue nope",
			reply: &api.Response{Shares: sampleShares()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = func(api.Request) (*api.Response, error) {
				r := *tt.reply
				if r.Error != nil {
					return refuse(&r)
				}
				r.V = 1
				return &r, nil
			}
			code := Qstat(context.Background(), append([]string{"qstat"}, tt.args...), ts.Sys)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if tt.code == ExitUsage && len(ts.rec.reqs) > 0 {
				t.Error("a usage error sent a request")
			}
			if !strings.Contains(ts.err.String(), tt.stderr) {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
			if !strings.Contains(ts.out.String(), tt.stdout) {
				t.Errorf("stdout = %q, want %q", ts.out, tt.stdout)
			}
		})
	}
}

func TestUsageBar(t *testing.T) {
	tests := []struct {
		s     api.ShareStatus
		scale int
		want  string
	}{
		{api.ShareStatus{Quota: 16, InUse: 20, Borrowed: 4}, 20, strings.Repeat(barOwn, 16) + strings.Repeat(barBorrowed, 4)},
		{api.ShareStatus{Quota: 16, InUse: 8, Lent: 4}, 20, strings.Repeat(barOwn, 8) + strings.Repeat(barLent, 4) + strings.Repeat(barIdle, 4)},
		{api.ShareStatus{Quota: 8}, 20, strings.Repeat(barIdle, 8)},
		{api.ShareStatus{Quota: 1000, InUse: 1}, 1000, barOwn + strings.Repeat(barIdle, 19)},
		{api.ShareStatus{}, 1, ""},
	}
	for _, tt := range tests {
		if got, _ := usageBar(tt.s, tt.scale, false); got != tt.want {
			t.Errorf("usageBar(%+v, %d) = %q, want %q", tt.s, tt.scale, got, tt.want)
		}
	}
}

// TestQstatEmpty: with no job, qstat and qstat -a print nothing, as PBS's
// do (scripts test for empty output); qstat -T prints its header, so that
// a user sees the command worked and nothing is pending.
func TestQstatEmpty(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		header bool
	}{{nil, false}, {[]string{"-a"}, false}, {[]string{"-T"}, true}} {
		t.Run(strings.Join(append([]string{"qstat"}, tt.args...), " "), func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = func(req api.Request) (*api.Response, error) { return &api.Response{V: 1}, nil }
			if code := Qstat(context.Background(), append([]string{"qstat"}, tt.args...), ts.Sys); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, ts.err)
			}
			out := ts.out.String()
			if got := strings.Contains(out, "Est"); got != tt.header || (!tt.header && out != "") {
				t.Errorf("output %q, want header %v", out, tt.header)
			}
		})
	}
}
