package cli

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// familyController is pbsController with nodes, drain and resume.
func familyController(t *testing.T, ts *testSys) {
	t.Helper()
	pbsController(t, ts)
	jobs := ts.rec.reply
	ts.rec.reply = func(req api.Request) (*api.Response, error) {
		switch req.Op {
		case api.OpNodes:
			return &api.Response{V: 1, Nodes: sampleNodes()}, nil
		case api.OpDrain, api.OpResume, api.OpComment:
			if req.Node != "gpu01" {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeBadRequest, Message: "unknown node " + req.Node}})
			}
			return &api.Response{V: 1}, nil
		}
		return jobs(req)
	}
}

func TestQselect(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		want   []string
		code   int
		stderr string
	}{
		{name: "every current job", want: []string{"101.lab", "102.lab", "103[].lab", "104.lab", "105.lab", "123456789012345678.verylongcluster"}},
		{name: "user", args: []string{"-u", "alice"}, want: []string{"101.lab", "104.lab"}},
		{name: "users with hosts", args: []string{"-u", "bob@login1,dave"}, want: []string{"102.lab", "105.lab"}},
		{name: "states", args: []string{"-s", "QH"}, want: []string{"102.lab", "104.lab"}},
		{name: "finished with -x", args: []string{"-x", "-s", "F"}, want: []string{"99.lab", "98.lab"}},
		{name: "F alone asks for finished jobs", args: []string{"-sF"}, want: []string{"99.lab", "98.lab"}},
		{name: "share", args: []string{"-q", "vision"}, want: []string{"101.lab", "103[].lab", "104.lab"}},
		{name: "share as operand", args: []string{"nlp@lab"}, want: []string{"102.lab"}},
		{name: "name", args: []string{"-N", "sweep", "-t"}, want: []string{"103[].lab", "103[4].lab", "103[6].lab"}},
		{name: "arrays", args: []string{"-J"}, want: []string{"103[].lab"}},
		{name: "combined", args: []string{"-xu", "alice", "-sRF"}, want: []string{"101.lab", "99.lab"}},
		{name: "bad state", args: []string{"-s", "Qz"}, code: ExitUsage, stderr: `-s Qz: 'z' is not a state`},
		{name: "unknown share", args: []string{"-q", "nope"}, code: ExitUnknownQueue, stderr: "qselect: Unknown queue nope\n"},
		{name: "a job id is no destination", args: []string{"12"}, code: ExitUsage, stderr: `"12" is not a destination`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			pbsController(t, ts)
			code := Qselect(context.Background(), append([]string{"qselect"}, tt.args...), ts.Sys)
			if code != tt.code || !strings.Contains(ts.err.String(), tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, ts.err, tt.code, tt.stderr)
			}
			got := strings.Fields(ts.out.String())
			if tt.code == 0 && !slices.Equal(got, tt.want) {
				t.Errorf("ids %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPbsnodes(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
		absent   []string
		stderr   string
		marks    []string // the drain and resume requests sent, "op node"
	}{
		{name: "all", args: []string{"-a"}, contains: []string{
			"gpu01\n     Mom = gpu01\n     ntype = PBS\n     state = free\n",
			"     jobs = 101.lab/0\n",
			"     resources_available.ngpus = 8\n     resources_available.vnode = gpu01\n     resources_assigned.ngpus = 4\n",
			"gpu02\n     Mom = gpu02\n     ntype = PBS\n     state = offline\n",
			"gpu03\n     Mom = gpu03\n     ntype = PBS\n     state = down\n",
			"     comment = NVML reports 7 GPUs, config says 8; no heartbeat for 2m\n",
			"     gpus_in_use = 0-3\n",
		}},
		{name: "av is the same", args: []string{"-av"}, contains: []string{"gpu01\n     Mom = gpu01\n"}},
		{name: "named", args: []string{"gpu02"}, contains: []string{"gpu02\n"}, absent: []string{"gpu01", "gpu03"}},
		{name: "unknown node", args: []string{"gpu02", "gpu09"}, code: ExitUnknownNode, contains: []string{"gpu02\n"}, stderr: "pbsnodes: Unknown node  gpu09\n"},
		{name: "down or offline", args: []string{"-l"}, contains: []string{
			"gpu02                offline \n", "gpu03                down NVML reports 7 GPUs, config says 8; no heartbeat for 2m\n"}, absent: []string{"gpu01"}},
		{name: "dsv", args: []string{"-a", "-F", "dsv"}, contains: []string{"Name=gpu01|Mom=gpu01|ntype=PBS|state=free|"}},
		{name: "offline", args: []string{"-o", "gpu01"}, marks: []string{"drain gpu01"}},
		{name: "offline unknown", args: []string{"-o", "gpu09"}, code: ExitFailure, stderr: "pbsnodes: Error marking node gpu09 - unknown node gpu09\n", marks: []string{"drain gpu09"}},
		{name: "reset", args: []string{"-r", "gpu01"}, marks: []string{"resume gpu01"}},
		{name: "clear", args: []string{"-c", "gpu01"}, marks: []string{"resume gpu01"}},
		{name: "comment", args: []string{"-C", "fan replaced", "gpu01"}, marks: []string{"comment gpu01 fan replaced"}},
		{name: "offline with a comment", args: []string{"-o", "-C", "DIMM errors", "gpu01"}, marks: []string{"drain gpu01 DIMM errors"}},
		{name: "clear and remove the comment", args: []string{"-c", "-C", "", "gpu01"}, marks: []string{"resume gpu01 "}},
		{name: "comment needs a node", args: []string{"-C", "x"}, code: ExitUsage, stderr: "name nodes"},
		{name: "comment with -a", args: []string{"-a", "-C", "x"}, code: ExitUsage, stderr: "-C goes with node names"},
		{name: "clear needs a node", args: []string{"-c"}, code: ExitUsage, stderr: "name nodes"},
		{name: "clear and offline", args: []string{"-c", "-o", "gpu01"}, code: ExitUsage, stderr: "go one at a time"},
		{name: "nothing named", code: ExitUsage, stderr: "name nodes, or -a for all of them"},
		{name: "a and l", args: []string{"-al"}, code: ExitUsage, stderr: "go one at a time"},
		{name: "bad format", args: []string{"-a", "-F", "xml"}, code: ExitUsage, stderr: "the formats are json and dsv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			familyController(t, ts)
			code := Pbsnodes(context.Background(), append([]string{"pbsnodes"}, tt.args...), ts.Sys)
			if code != tt.code || !strings.Contains(ts.err.String(), tt.stderr) || tt.stderr == "" && ts.err.Len() > 0 {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, ts.err, tt.code, tt.stderr)
			}
			for _, s := range tt.contains {
				if !strings.Contains(ts.out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, ts.out)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(ts.out.String(), s) {
					t.Errorf("output has %q:\n%s", s, ts.out)
				}
			}
			var marks []string
			for _, r := range ts.rec.reqs {
				if r.Op == api.OpDrain || r.Op == api.OpResume || r.Op == api.OpComment {
					m := string(r.Op) + " " + r.Node
					if r.Comment != nil {
						m += " " + *r.Comment
					}
					marks = append(marks, m)
				}
			}
			if !slices.Equal(marks, tt.marks) {
				t.Errorf("requests %q, want %q", marks, tt.marks)
			}
		})
	}
}

func TestPbsnodesJSON(t *testing.T) {
	ts := newTestSys(t)
	familyController(t, ts)
	if code := Pbsnodes(context.Background(), []string{"pbsnodes", "-a", "-F", "json"}, ts.Sys); code != 0 {
		t.Fatalf("exit %d %s", code, ts.err)
	}
	var doc struct {
		Timestamp int64                     `json:"timestamp"`
		Server    string                    `json:"pbs_server"`
		Nodes     map[string]map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal(ts.out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, ts.out)
	}
	n := doc.Nodes["gpu01"]
	avail, _ := n["resources_available"].(map[string]any)
	if doc.Server != "lab" || doc.Timestamp != testNow.Unix() || n["state"] != "free" || avail["ngpus"] != float64(8) || doc.Nodes["gpu02"]["state"] != "offline" {
		t.Errorf("pbsnodes -a -F json: %+v", doc)
	}
}

func TestPbsNodeState(t *testing.T) {
	tests := []struct {
		n    api.NodeStatus
		want string
	}{
		{api.NodeStatus{State: "up", GPUs: 8}, "free"},
		{api.NodeStatus{State: "up", GPUs: 8, UsedGPUs: []int{0, 1}}, "free"},
		{api.NodeStatus{State: "up", GPUs: 2, UsedGPUs: []int{0, 1}}, "job-busy"},
		{api.NodeStatus{State: "up"}, "free"},
		{api.NodeStatus{State: "drained", GPUs: 2, UsedGPUs: []int{0, 1}}, "offline"},
		{api.NodeStatus{State: "down"}, "down"},
		{api.NodeStatus{State: "unhealthy"}, "down"},
	}
	for _, tt := range tests {
		if got := pbsNodeState(tt.n); got != tt.want {
			t.Errorf("pbsNodeState(%+v) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestPbsnodesShowsComment: an admin's comment comes first in PBS's
// comment attribute, before the node's problems, in -a, -l and -F json.
func TestPbsnodesShowsComment(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-a"}, "     comment = fan replaced; NVML reports 7 GPUs, config says 8; no heartbeat for 2m\n"},
		{[]string{"-l"}, "gpu03                down fan replaced; NVML reports 7 GPUs, config says 8; no heartbeat for 2m\n"},
		{[]string{"-l"}, "gpu02                offline DIMM errors\n"},
		{[]string{"-F", "json", "gpu02"}, "DIMM errors"},
	} {
		ts := newTestSys(t)
		familyController(t, ts)
		reply := ts.rec.reply
		ts.rec.reply = func(req api.Request) (*api.Response, error) {
			if req.Op != api.OpNodes {
				return reply(req)
			}
			nodes := sampleNodes()
			for i := range nodes {
				switch nodes[i].Name {
				case "gpu02":
					nodes[i].Comment = "DIMM errors"
				case "gpu03":
					nodes[i].Comment = "fan replaced"
				}
			}
			return &api.Response{V: 1, Nodes: nodes}, nil
		}
		if code := Pbsnodes(context.Background(), append([]string{"pbsnodes"}, tt.args...), ts.Sys); code != 0 {
			t.Fatalf("pbsnodes %v: exit %d %s", tt.args, code, ts.err)
		}
		if tt.args[0] == "-F" {
			var doc struct {
				Nodes map[string]map[string]any `json:"nodes"`
			}
			if err := json.Unmarshal(ts.out.Bytes(), &doc); err != nil || doc.Nodes["gpu02"]["comment"] != tt.want {
				t.Errorf("pbsnodes %v: %v, comment %v, want %q", tt.args, err, doc.Nodes["gpu02"]["comment"], tt.want)
			}
		} else if !strings.Contains(ts.out.String(), tt.want) {
			t.Errorf("pbsnodes %v lacks %q:\n%s", tt.args, tt.want, ts.out)
		}
	}
}
