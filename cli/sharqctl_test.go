package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

func TestSharqctlRequests(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		reply  func(api.Request) (*api.Response, error)
		want   []api.Request
		code   int
		stdout string // substring
		stderr string // exact
	}{
		{name: "reconfigure", args: []string{"reconfigure"}, want: []api.Request{{V: 1, Op: api.OpReconfigure}},
			reply: func(api.Request) (*api.Response, error) {
				return &api.Response{V: 1, Text: "shares: +scratch; quota vision 16->24"}, nil
			},
			stdout: "shares: +scratch; quota vision 16->24\n"},
		{name: "reconfigure refused", args: []string{"reconfigure"}, want: []api.Request{{V: 1, Op: api.OpReconfigure}},
			reply: func(api.Request) (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeConfig, Message: "sharq.toml:12: unknown strategy \"LENDX\""}})
			},
			code: ExitFailure, stderr: "sharqctl: sharq.toml:12: unknown strategy \"LENDX\"\n"},
		{name: "show config", args: []string{"show", "config"}, want: []api.Request{{V: 1, Op: api.OpConfig}},
			reply: func(api.Request) (*api.Response, error) {
				return &api.Response{V: 1, Text: "[cluster]\nname = \"lab\"\n"}, nil
			},
			stdout: "[cluster]\nname = \"lab\"\n"},
		{name: "show shares", args: []string{"show", "shares"}, want: []api.Request{{V: 1, Op: api.OpShares}},
			reply:  func(api.Request) (*api.Response, error) { return &api.Response{V: 1, Shares: sampleShares()}, nil },
			stdout: "vision           a100         LEND_AND_BORROW    16    20        4"},
		{name: "show job", args: []string{"show", "job", "101"}, want: []api.Request{{V: 1, Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{"101"}, Finished: true, Full: true}}},
			reply:  func(api.Request) (*api.Response, error) { return &api.Response{V: 1, Jobs: sampleJobs()[:1]}, nil },
			stdout: "Job Id: 101.lab\n    Job_Name = train-resnet\n"},
		{name: "show job json after id", args: []string{"show", "job", "101", "--json"}, want: []api.Request{{V: 1, Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{"101"}, Finished: true, Full: true}}},
			reply:  func(api.Request) (*api.Response, error) { return &api.Response{V: 1, Jobs: sampleJobs()[:1]}, nil },
			stdout: `"id": "101.lab"`},
		{name: "show unknown job", args: []string{"show", "job", "9"}, want: []api.Request{{V: 1, Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{"9"}, Finished: true, Full: true}}},
			reply: func(api.Request) (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "x"}})
			},
			code: ExitUnknownJob, stderr: "sharqctl: Unknown Job Id 9\n"},
		{name: "show controllers", args: []string{"show", "controllers"}, want: []api.Request{{V: 1, Op: api.OpControllers}},
			reply: func(api.Request) (*api.Response, error) {
				return &api.Response{V: 1, Controllers: []api.ControllerStatus{
					{Host: "ctl02", PID: 812, Nodes: "ctl02:6820", Leader: true, Epoch: 4711},
					{Host: "ctl01", PID: 90, Nodes: "ctl01:6820", Epoch: 4800},
				}}, nil
			},
			stdout: "ctl02                812 ctl02:6820            leader        4711 -                   -\nctl01                 90 ctl01:6820            follower      4800"},
		{name: "show controllers json", args: []string{"show", "controllers", "--json"}, want: []api.Request{{V: 1, Op: api.OpControllers}},
			reply: func(api.Request) (*api.Response, error) {
				return &api.Response{V: 1, Controllers: []api.ControllerStatus{{Host: "ctl02", Leader: true, Epoch: 4711}}}, nil
			},
			stdout: `"epoch": 4711`},
		{name: "drain", args: []string{"node", "drain", "gpu07", "gpu08"}, want: []api.Request{{V: 1, Op: api.OpDrain, Node: "gpu07"}, {V: 1, Op: api.OpDrain, Node: "gpu08"}}},
		{name: "resume unknown", args: []string{"node", "resume", "gpu99", "gpu07"}, want: []api.Request{{V: 1, Op: api.OpResume, Node: "gpu99"}, {V: 1, Op: api.OpResume, Node: "gpu07"}},
			reply: func(r api.Request) (*api.Response, error) {
				if r.Node == "gpu99" {
					return refuse(&api.Response{Error: &api.Error{Code: api.CodeBadRequest, Message: "unknown node gpu99"}})
				}
				return &api.Response{V: 1}, nil
			},
			code: ExitFailure, stderr: "sharqctl: resume gpu99: unknown node gpu99\n"},
		{name: "priority", args: []string{"job", "priority", "123", "9000"}, want: []api.Request{{V: 1, Op: api.OpAlter, Alter: &api.AlterSpec{ID: "123", Priority: ptr(9000)}}}},
		{name: "hold", args: []string{"job", "hold", "1", "2[1-2]"}, want: []api.Request{{V: 1, Op: api.OpHold, IDs: []string{"1", "2[1]", "2[2]"}}}},
		{name: "release", args: []string{"job", "release", "1"}, want: []api.Request{{V: 1, Op: api.OpRelease, IDs: []string{"1"}}}},
		{name: "release not held", args: []string{"job", "release", "1"}, want: []api.Request{{V: 1, Op: api.OpRelease, IDs: []string{"1"}}},
			reply: func(api.Request) (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeInvalidState, Message: "not held", ID: "1.lab"}})
			},
			code: ExitBadState, stderr: "sharqctl: Request invalid for state of job 1.lab (not held)\n"},
		{name: "priority range", args: []string{"job", "priority", "1", "10001"}, code: ExitUsage, stderr: "sharqctl: \"10001\": want a priority from 0 to 9999\nTry 'sharqctl --help' for more information.\n"},
		{name: "priority args", args: []string{"job", "priority", "1"}, code: ExitUsage, stderr: "sharqctl: want a job id and a priority\nTry 'sharqctl --help' for more information.\n"},
		{name: "drain nothing", args: []string{"node", "drain"}, code: ExitUsage, stderr: "sharqctl: no node name given\nTry 'sharqctl --help' for more information.\n"},
		{name: "show shares extra", args: []string{"show", "shares", "x"}, code: ExitUsage, stderr: "sharqctl: unexpected argument \"x\"\nTry 'sharqctl --help' for more information.\n"},
		{name: "unknown flag", args: []string{"show", "nodes", "--wide"}, code: ExitUsage, stderr: "sharqctl: flag provided but not defined: -wide\nTry 'sharqctl --help' for more information.\n"},
		{name: "show job two", args: []string{"show", "job", "1", "2"}, code: ExitUsage, stderr: "sharqctl: want one job id\nTry 'sharqctl --help' for more information.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = tt.reply
			code := Sharqctl(context.Background(), append([]string{"sharqctl"}, tt.args...), ts.Sys)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if !reflect.DeepEqual(ts.rec.reqs, tt.want) {
				t.Errorf("requests %+v, want %+v", ts.rec.reqs, tt.want)
			}
			if !strings.Contains(ts.out.String(), tt.stdout) {
				t.Errorf("stdout = %q, want %q", ts.out, tt.stdout)
			}
			if ts.err.String() != tt.stderr {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
		})
	}
}

func TestSharqctlNodesGolden(t *testing.T) {
	for _, tt := range []struct {
		file     string
		terminal bool
	}{{"nodes.txt", false}, {"nodes.term.txt", true}} {
		t.Run(tt.file, func(t *testing.T) {
			ts := newTestSys(t)
			ts.Terminal, ts.Color = tt.terminal, tt.terminal
			ts.rec.reply = func(api.Request) (*api.Response, error) { return &api.Response{V: 1, Nodes: sampleNodes()}, nil }
			if code := Sharqctl(context.Background(), []string{"sharqctl", "show", "nodes"}, ts.Sys); code != 0 {
				t.Fatalf("exit %d: %s", code, ts.err)
			}
			golden(t, tt.file, ts.out.String())
		})
	}
}

func TestSharqctlNodesJSON(t *testing.T) {
	ts := newTestSys(t)
	ts.rec.reply = func(api.Request) (*api.Response, error) { return &api.Response{V: 1, Nodes: sampleNodes()}, nil }
	if code := Sharqctl(context.Background(), []string{"sharqctl", "show", "nodes", "--json"}, ts.Sys); code != 0 {
		t.Fatalf("exit %d: %s", code, ts.err)
	}
	var got []api.NodeStatus
	if err := json.Unmarshal(ts.out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Problems[1] != "no heartbeat for 2m" {
		t.Errorf("decoded %+v", got)
	}
}

func TestSharqctlImageImport(t *testing.T) {
	type call struct{ socket, ns, body string }
	tests := []struct {
		name   string
		args   []string
		stdin  string
		fail   error
		want   call
		code   int
		stdout string
		stderr string
	}{
		{name: "defaults", args: []string{"image", "import", "img.tar"}, want: call{DefaultContainerdSocket, DefaultImageNamespace, "TAR"}, stdout: "docker.io/library/pytorch:24.05\n"},
		{name: "flags before", args: []string{"image", "import", "--containerd", "/run/c.sock", "--namespace", "x", "img.tar"}, want: call{"/run/c.sock", "x", "TAR"}, stdout: "docker.io/library/pytorch:24.05\n"},
		{name: "flags after", args: []string{"image", "import", "img.tar", "--containerd", "/run/c.sock", "--namespace=y"}, want: call{"/run/c.sock", "y", "TAR"}, stdout: "docker.io/library/pytorch:24.05\n"},
		{name: "stdin", args: []string{"image", "import", "-"}, stdin: "PIPE", want: call{DefaultContainerdSocket, DefaultImageNamespace, "PIPE"}, stdout: "docker.io/library/pytorch:24.05\n"},
		{name: "missing file", args: []string{"image", "import", "nope.tar"}, code: ExitFailure, stderr: "sharqctl: image import: open "},
		{name: "import fails", args: []string{"image", "import", "img.tar"}, fail: errors.New("import image: connect: refused"), want: call{DefaultContainerdSocket, DefaultImageNamespace, "TAR"},
			code: ExitFailure, stderr: "sharqctl: import image: connect: refused\n"},
		{name: "no file", args: []string{"image", "import"}, code: ExitUsage, stderr: "want one image archive"},
		{name: "flag without value", args: []string{"image", "import", "img.tar", "--namespace"}, code: ExitUsage, stderr: "flag needs an argument: --namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.Stdin = strings.NewReader(tt.stdin)
			if err := os.WriteFile(filepath.Join(ts.Dir, "img.tar"), []byte("TAR"), 0o644); err != nil {
				t.Fatal(err)
			}
			var got call
			ts.ImportImage = func(_ context.Context, socket, ns string, r io.Reader) ([]string, error) {
				b, err := io.ReadAll(r)
				if err != nil {
					return nil, err
				}
				got = call{socket, ns, string(b)}
				if tt.fail != nil {
					return nil, tt.fail
				}
				return []string{"docker.io/library/pytorch:24.05"}, nil
			}
			code := Sharqctl(context.Background(), append([]string{"sharqctl"}, tt.args...), ts.Sys)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if got != tt.want {
				t.Errorf("imported %+v, want %+v", got, tt.want)
			}
			if ts.out.String() != tt.stdout || !strings.Contains(ts.err.String(), tt.stderr) || tt.stderr == "" && ts.err.Len() > 0 {
				t.Errorf("stdout %q stderr %q; want %q, %q", ts.out, ts.err, tt.stdout, tt.stderr)
			}
			if len(ts.rec.reqs) != 0 {
				t.Error("image import talked to the controller")
			}
		})
	}
	ts := newTestSys(t)
	if code := Sharqctl(context.Background(), []string{"sharqctl", "image", "import", "x.tar"}, ts.Sys); code != ExitFailure ||
		!strings.Contains(ts.err.String(), "image import is not available in this build") {
		t.Errorf("without an importer: exit %d, %q", code, ts.err)
	}
}

func TestSharqctlHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"show", "--help"}, {"node", "drain", "--help"}, {"image", "import", "--help"}, {"help", "job"}} {
		ts := newTestSys(t)
		code := Sharqctl(context.Background(), append([]string{"sharqctl"}, args...), ts.Sys)
		if code != 0 || !strings.Contains(ts.out.String(), "sharqctl") || !strings.Contains(ts.out.String(), "USAGE") {
			t.Errorf("%q: exit %d, out %q, err %q", args, code, ts.out, ts.err)
		}
	}
}
