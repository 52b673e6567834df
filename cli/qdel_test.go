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

func TestIDCommands(t *testing.T) {
	type cmd func(context.Context, []string, *Sys) int
	tests := []struct {
		name    string
		cmd     cmd
		args    []string
		reply   *api.Response // nil: success
		wantReq api.Request
		code    int
		stderr  string
	}{
		{name: "qdel one", cmd: Qdel, args: []string{"qdel", "123"}, wantReq: api.Request{V: 1, Op: api.OpDelete, IDs: []string{"123"}}},
		{name: "qdel many", cmd: Qdel, args: []string{"qdel", "123.lab", "124[]", "125[7]", "126[2-4]"},
			wantReq: api.Request{V: 1, Op: api.OpDelete, IDs: []string{"123.lab", "124[]", "125[7]", "126[2]", "126[3]", "126[4]"}}},
		{name: "qdel unknown", cmd: Qdel, args: []string{"qdel", "999"}, wantReq: api.Request{V: 1, Op: api.OpDelete, IDs: []string{"999"}},
			reply: &api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "no such job"}},
			code:  ExitUnknownJob, stderr: "qdel: Unknown Job Id 999\n"},
		{name: "qdel not owner", cmd: Qdel, args: []string{"qdel", "5.lab"}, wantReq: api.Request{V: 1, Op: api.OpDelete, IDs: []string{"5.lab"}},
			reply: &api.Response{Error: &api.Error{Code: api.CodePermission, Message: "not yours", ID: "5.lab"}},
			code:  ExitPermission, stderr: "qdel: Unauthorized Request  5.lab (not yours)\n"},
		{name: "qdel partly", cmd: Qdel, args: []string{"qdel", "1", "2", "3"}, wantReq: api.Request{V: 1, Op: api.OpDelete, IDs: []string{"1", "2", "3"}},
			reply: &api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "2 of 3 failed"}, Errors: []api.Error{
				{Code: api.CodeUnknownJob, ID: "2.lab"}, {Code: api.CodePermission, ID: "3.lab"}}},
			code: ExitUnknownJob, stderr: "qdel: Unknown Job Id 2.lab\nqdel: Unauthorized Request  3.lab\n"},
		{name: "qdel other failure", cmd: Qdel, args: []string{"qdel", "1"}, wantReq: api.Request{V: 1, Op: api.OpDelete, IDs: []string{"1"}},
			reply: &api.Response{Error: &api.Error{Code: api.CodeInternal, Message: "spool write failed"}},
			code:  ExitFailure, stderr: "qdel: spool write failed 1\n"},
		{name: "qdel -W force", cmd: Qdel, args: []string{"qdel", "-W", "force", "9"}, wantReq: api.Request{V: 1, Op: api.OpDelete, IDs: []string{"9"}, Force: true}},
		{name: "qhold", cmd: Qhold, args: []string{"qhold", "7", "8"}, wantReq: api.Request{V: 1, Op: api.OpHold, IDs: []string{"7", "8"}}},
		{name: "qhold running", cmd: Qhold, args: []string{"qhold", "7"}, wantReq: api.Request{V: 1, Op: api.OpHold, IDs: []string{"7"}},
			reply: &api.Response{Error: &api.Error{Code: api.CodeInvalidState, Message: "running", ID: "7.lab"}},
			code:  ExitBadState, stderr: "qhold: Request invalid for state of job 7.lab (running)\n"},
		{name: "qrls", cmd: Qrls, args: []string{"qrls", "7"}, wantReq: api.Request{V: 1, Op: api.OpRelease, IDs: []string{"7"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			if tt.reply != nil {
				ts.rec.reply = func(api.Request) (*api.Response, error) { r := *tt.reply; return refuse(&r) }
			}
			code := tt.cmd(context.Background(), tt.args, ts.Sys)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if len(ts.rec.reqs) != 1 || !reflect.DeepEqual(ts.rec.reqs[0], tt.wantReq) {
				t.Errorf("requests %+v, want %+v", ts.rec.reqs, tt.wantReq)
			}
			if ts.err.String() != tt.stderr {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
			if ts.out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", ts.out)
			}
		})
	}
}

func TestIDCommandUsage(t *testing.T) {
	for _, args := range [][]string{{"qdel"}, {"qdel", "-x", "1"}, {"qdel", "1[3-1]"}, {"qrls"}} {
		ts := newTestSys(t)
		code := Qdel(context.Background(), args, ts.Sys)
		if code != ExitUsage || len(ts.rec.reqs) != 0 || !strings.Contains(ts.err.String(), "--help") {
			t.Errorf("%q: exit %d, %d requests, stderr %q", args, code, len(ts.rec.reqs), ts.err)
		}
	}
	ts := newTestSys(t)
	if code := Qdel(context.Background(), []string{"qdel", "--help"}, ts.Sys); code != 0 || !strings.Contains(ts.out.String(), "qdel '125[10-19]'") {
		t.Errorf("qdel --help: exit %d, %q", code, ts.out)
	}
}

func TestQalter(t *testing.T) {
	d := []api.Dep{{Type: jobid.AfterOK, On: "120"}}
	tests := []struct {
		name   string
		args   []string
		want   []api.AlterSpec
		code   int
		stderr string
	}{
		{name: "priority", args: []string{"-p", "500", "123"}, want: []api.AlterSpec{{ID: "123", PBSPriority: ptr(500)}}},
		{name: "negative priority", args: []string{"-p", "-3", "123"}, want: []api.AlterSpec{{ID: "123", PBSPriority: ptr(-3)}}},
		{name: "walltime two jobs", args: []string{"-l", "walltime=24:00:00", "123", "124"},
			want: []api.AlterSpec{{ID: "123", Walltime: ptr(24 * time.Hour)}, {ID: "124", Walltime: ptr(24 * time.Hour)}}},
		{name: "everything", args: []string{"-p", "1", "-N", "renamed", "-W", "depend=afterok:120", "-a", "1800", "5.lab"},
			want: []api.AlterSpec{{ID: "5.lab", PBSPriority: ptr(1), Name: ptr("renamed"), Deps: &d, NotBefore: ptr(time.Date(2026, 3, 1, 18, 0, 0, 0, time.UTC))}}},
		{name: "clear deps", args: []string{"-W", "depend=", "5"}, want: []api.AlterSpec{{ID: "5", Deps: &[]api.Dep{}}}},
		{name: "nothing", args: []string{"5"}, code: ExitUsage, stderr: "nothing to change"},
		{name: "no id", args: []string{"-p", "5"}, code: ExitUsage, stderr: "no job id given"},
		{name: "other resource", args: []string{"-l", "ngpus=4", "5"}, code: ExitUsage, stderr: "only walltime can be altered"},
		{name: "bad priority", args: []string{"-p", "1024", "5"}, code: ExitUsage, stderr: "-1024 to 1023"},
		{name: "bad W", args: []string{"-W", "grace=5", "5"}, code: ExitUsage, stderr: `unknown attribute "grace"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			code := Qalter(context.Background(), append([]string{"qalter"}, tt.args...), ts.Sys)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, ts.err)
			}
			if !strings.Contains(ts.err.String(), tt.stderr) {
				t.Errorf("stderr = %q, want %q", ts.err, tt.stderr)
			}
			var got []api.AlterSpec
			for _, r := range ts.rec.reqs {
				if r.Op != api.OpAlter || r.Alter == nil {
					t.Fatalf("request %+v", r)
				}
				got = append(got, *r.Alter)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("sent %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestQalterUnknownJob(t *testing.T) {
	ts := newTestSys(t)
	ts.rec.reply = func(req api.Request) (*api.Response, error) {
		if req.Alter.ID == "2" {
			return refuse(&api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "unknown"}})
		}
		return &api.Response{V: 1}, nil
	}
	code := Qalter(context.Background(), []string{"qalter", "-p", "3", "1", "2", "3"}, ts.Sys)
	if code != ExitUnknownJob || ts.err.String() != "qalter: Unknown Job Id 2\n" || len(ts.rec.reqs) != 3 {
		t.Errorf("exit %d, stderr %q, %d requests", code, ts.err, len(ts.rec.reqs))
	}
}
