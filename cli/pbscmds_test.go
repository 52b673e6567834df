package cli

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
)

// TestPBSJobCommands runs qsig (and the other one-request job commands
// of PBS's family) against the recording controller: the request each
// command line sends, and PBS's messages and exit statuses for the
// controller's refusals.
func TestPBSJobCommands(t *testing.T) {
	type cmd func(context.Context, []string, *Sys) int
	tests := []struct {
		name    string
		cmd     cmd
		args    []string
		reply   *api.Response // nil: success
		wantReq *api.Request  // nil: no request is sent
		code    int
		stderr  string
	}{
		{name: "qsig default TERM", cmd: Qsig, args: []string{"qsig", "12"},
			wantReq: &api.Request{V: 1, Op: api.OpSignal, IDs: []string{"12"}, Signal: "SIGTERM"}},
		{name: "qsig -s USR1", cmd: Qsig, args: []string{"qsig", "-s", "USR1", "12.lab", "13[2-3]"},
			wantReq: &api.Request{V: 1, Op: api.OpSignal, IDs: []string{"12.lab", "13[2]", "13[3]"}, Signal: "SIGUSR1"}},
		{name: "qsig -s number joined", cmd: Qsig, args: []string{"qsig", "-s2", "12"},
			wantReq: &api.Request{V: 1, Op: api.OpSignal, IDs: []string{"12"}, Signal: "SIGINT"}},
		{name: "qsig suspend", cmd: Qsig, args: []string{"qsig", "-s", "suspend", "12"}, code: ExitUsage, stderr: "sharq does not suspend jobs"},
		{name: "qsig unknown signal", cmd: Qsig, args: []string{"qsig", "-s", "FOO", "12"}, code: ExitUsage, stderr: `unknown signal "FOO"`},
		{name: "qsig no id", cmd: Qsig, args: []string{"qsig", "-s", "USR1"}, code: ExitUsage, stderr: "no job id given"},
		{name: "qsig queued job", cmd: Qsig, args: []string{"qsig", "12"},
			wantReq: &api.Request{V: 1, Op: api.OpSignal, IDs: []string{"12"}, Signal: "SIGTERM"},
			reply:   &api.Response{Error: &api.Error{Code: api.CodeInvalidState, Message: "it is queued: only a running job can be signalled", ID: "12.lab"}},
			code:    ExitBadState, stderr: "qsig: Request invalid for state of job 12.lab (it is queued: only a running job can be signalled)\n"},
		{name: "qsig unknown job", cmd: Qsig, args: []string{"qsig", "99"},
			wantReq: &api.Request{V: 1, Op: api.OpSignal, IDs: []string{"99"}, Signal: "SIGTERM"},
			reply:   &api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id 99", ID: "99"}},
			code:    ExitUnknownJob, stderr: "qsig: Unknown Job Id 99\n"},
		{name: "qsig not owner", cmd: Qsig, args: []string{"qsig", "12"},
			wantReq: &api.Request{V: 1, Op: api.OpSignal, IDs: []string{"12"}, Signal: "SIGTERM"},
			reply:   &api.Response{Error: &api.Error{Code: api.CodePermission, Message: "Unauthorized Request 12.lab", ID: "12.lab"}},
			code:    ExitPermission, stderr: "qsig: Unauthorized Request  12.lab\n"},
		{name: "qrerun", cmd: Qrerun, args: []string{"qrerun", "12", "13[]"},
			wantReq: &api.Request{V: 1, Op: api.OpRerun, IDs: []string{"12", "13[]"}}},
		{name: "qrerun no id", cmd: Qrerun, args: []string{"qrerun"}, code: ExitUsage, stderr: "no job id given"},
		{name: "qrerun queued job", cmd: Qrerun, args: []string{"qrerun", "12"},
			wantReq: &api.Request{V: 1, Op: api.OpRerun, IDs: []string{"12"}},
			reply:   &api.Response{Error: &api.Error{Code: api.CodeInvalidState, Message: "it is queued: only a running job can be rerun", ID: "12.lab"}},
			code:    ExitBadState, stderr: "qrerun: Request invalid for state of job 12.lab (it is queued: only a running job can be rerun)\n"},
		{name: "qrerun unknown job", cmd: Qrerun, args: []string{"qrerun", "98", "99"},
			wantReq: &api.Request{V: 1, Op: api.OpRerun, IDs: []string{"98", "99"}},
			reply: &api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id 99", ID: "99"},
				Errors: []api.Error{{Code: api.CodeUnknownJob, Message: "Unknown Job Id 99", ID: "99"}}},
			code: ExitUnknownJob, stderr: "qrerun: Unknown Job Id 99\n"},
		{name: "qmove", cmd: Qmove, args: []string{"qmove", "nlp", "12", "13.lab"},
			wantReq: &api.Request{V: 1, Op: api.OpMove, IDs: []string{"12", "13.lab"}, Share: "nlp"}},
		{name: "qmove to share@server", cmd: Qmove, args: []string{"qmove", "nlp@lab", "12"},
			wantReq: &api.Request{V: 1, Op: api.OpMove, IDs: []string{"12"}, Share: "nlp@lab"}},
		{name: "qmove unknown share", cmd: Qmove, args: []string{"qmove", "nope", "12"}, code: ExitUnknownQueue, stderr: "qmove: Unknown queue nope\n"},
		{name: "qmove server only", cmd: Qmove, args: []string{"qmove", "@lab", "12"}, code: ExitUsage, stderr: `"@lab" is not a destination`},
		{name: "qmove id first", cmd: Qmove, args: []string{"qmove", "12", "nlp"}, code: ExitUsage, stderr: `"12" is not a destination`},
		{name: "qmove no id", cmd: Qmove, args: []string{"qmove", "nlp"}, code: ExitUsage, stderr: "give a destination and at least one job id"},
		{name: "qmove running job", cmd: Qmove, args: []string{"qmove", "nlp", "12"},
			wantReq: &api.Request{V: 1, Op: api.OpMove, IDs: []string{"12"}, Share: "nlp"},
			reply:   &api.Response{Error: &api.Error{Code: api.CodeInvalidState, Message: "it is running: only a job that waits can be moved", ID: "12.lab"}},
			code:    ExitBadState, stderr: "qmove: Request invalid for state of job 12.lab (it is running: only a job that waits can be moved)\n"},
		{name: "qorder", cmd: Qorder, args: []string{"qorder", "12", "13.lab"},
			wantReq: &api.Request{V: 1, Op: api.OpOrder, IDs: []string{"12", "13.lab"}}},
		{name: "qorder one id", cmd: Qorder, args: []string{"qorder", "12"}, code: ExitUsage, stderr: "give two job ids"},
		{name: "qorder a range", cmd: Qorder, args: []string{"qorder", "12[1-2]", "13"}, code: ExitUsage, stderr: "not ranges of subjobs"},
		{name: "qorder running job", cmd: Qorder, args: []string{"qorder", "12", "13"},
			wantReq: &api.Request{V: 1, Op: api.OpOrder, IDs: []string{"12", "13"}},
			reply:   &api.Response{Error: &api.Error{Code: api.CodeInvalidState, Message: "it is running: only jobs that wait can be reordered", ID: "13.lab"}},
			code:    ExitBadState, stderr: "qorder: Request invalid for state of job 13.lab (it is running: only jobs that wait can be reordered)\n"},
		{name: "qorder unknown job", cmd: Qorder, args: []string{"qorder", "12", "99"},
			wantReq: &api.Request{V: 1, Op: api.OpOrder, IDs: []string{"12", "99"}},
			reply:   &api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id 99", ID: "99"}},
			code:    ExitUnknownJob, stderr: "qorder: Unknown Job Id 99\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = func(req api.Request) (*api.Response, error) {
				switch {
				case req.Op == api.OpShares: // qmove checks its destination
					return &api.Response{V: 1, Shares: sampleShares()}, nil
				case tt.reply != nil:
					r := *tt.reply
					return refuse(&r)
				}
				return &api.Response{V: 1}, nil
			}
			code := tt.cmd(context.Background(), tt.args, ts.Sys)
			if code != tt.code || !strings.Contains(ts.err.String(), tt.stderr) || tt.stderr == "" && ts.err.Len() > 0 {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, ts.err, tt.code, tt.stderr)
			}
			var reqs []api.Request
			for _, r := range ts.rec.reqs {
				if r.Op != api.OpShares {
					reqs = append(reqs, r)
				}
			}
			switch {
			case tt.wantReq == nil && len(reqs) != 0:
				t.Errorf("requests %+v, want none", reqs)
			case tt.wantReq != nil && (len(reqs) != 1 || !reflect.DeepEqual(reqs[0], *tt.wantReq)):
				t.Errorf("requests %+v, want %+v", reqs, *tt.wantReq)
			}
			if ts.out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", ts.out)
			}
		})
	}
}

// TestPBSJobCommandsHelp: each command's --help names its examples.
func TestPBSJobCommandsHelp(t *testing.T) {
	for _, tt := range []struct {
		cmd  func(context.Context, []string, *Sys) int
		name string
		want string
	}{
		{Qsig, "qsig", "qsig -s USR1 123"},
		{Qrerun, "qrerun", "qrerun '125[]'"},
		{Qmove, "qmove", "qmove nlp@lab 123"},
		{Qorder, "qorder", "qorder 123 130"},
		{Tracejob, "tracejob", "tracejob -n 2 '125[7]'"},
	} {
		ts := newTestSys(t)
		if code := tt.cmd(context.Background(), []string{tt.name, "--help"}, ts.Sys); code != 0 || !strings.Contains(ts.out.String(), tt.want) {
			t.Errorf("%s --help: exit %d, %q", tt.name, code, ts.out)
		}
	}
}

func TestTracejob(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 3, 1, h, m, 0, 0, time.UTC) }
	job := api.Job{ID: "12.lab", State: api.StateFinished, History: []api.HistoryEntry{
		{Time: at(9, 0).AddDate(0, 0, -2), State: api.StateHeld, What: "submitted to vision"},
		{Time: at(9, 0), State: api.StateQueued, What: "released by alice"},
		{Time: at(9, 1), State: api.StateRunning, What: "started on gpu01 [0 1]"},
		{Time: at(9, 2), State: api.StateRunning, What: "signal SIGUSR1 sent by alice"},
		{Time: at(9, 3), State: api.StateRunning, What: "signal SIGUSR1 sent by alice"},
		{Time: at(11, 30), State: api.StateFinished, What: "exited on gpu01 with status 0 \x1b[31m"},
	}}
	tests := []struct {
		name   string
		args   []string
		reply  func(api.Request) (*api.Response, error)
		want   string
		code   int
		stderr string
	}{
		{name: "whole history", args: []string{"12"}, want: "\nJob: 12.lab\n\n" +
			"02/27/2026 09:00:00  S    submitted to vision\n" +
			"03/01/2026 09:00:00  S    released by alice\n" +
			"03/01/2026 09:01:00  S    started on gpu01 [0 1]\n" +
			"03/01/2026 09:02:00  S    signal SIGUSR1 sent by alice\n" +
			"03/01/2026 09:03:00  S    signal SIGUSR1 sent by alice\n" +
			"03/01/2026 11:30:00  S    exited on gpu01 with status 0 \\x1b[31m\n"},
		{name: "the last day, repeats left out", args: []string{"-zn1", "12"}, want: "\nJob: 12.lab\n\n" +
			"03/01/2026 09:00:00  S    released by alice\n" +
			"03/01/2026 09:01:00  S    started on gpu01 [0 1]\n" +
			"03/01/2026 09:02:00  S    signal SIGUSR1 sent by alice\n" +
			"03/01/2026 11:30:00  S    exited on gpu01 with status 0 \\x1b[31m\n"},
		{name: "unknown job", args: []string{"99"},
			reply: func(api.Request) (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeUnknownJob, Message: "Unknown Job Id 99"}})
			},
			code: ExitUnknownJob, stderr: "tracejob: Couldn't find Job Id 99\n"},
		{name: "other failure", args: []string{"12"},
			reply: func(api.Request) (*api.Response, error) {
				return refuse(&api.Response{Error: &api.Error{Code: api.CodeInternal, Message: "spool read failed"}})
			},
			code: ExitFailure, stderr: "tracejob: spool read failed\n"},
		{name: "two ids", args: []string{"12", "13"}, code: ExitUsage, stderr: "give one job id"},
		{name: "a range", args: []string{"12[1-3]"}, code: ExitUsage, stderr: "not a range of subjobs"},
		{name: "negative days", args: []string{"-n", "-1", "12"}, code: ExitUsage, stderr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = tt.reply
			if tt.reply == nil {
				ts.rec.reply = func(req api.Request) (*api.Response, error) {
					if f := req.Stat; req.Op != api.OpStat || f == nil || !f.Full || !f.Finished || len(f.IDs) != 1 {
						t.Errorf("request %+v", req)
					}
					return &api.Response{V: 1, Jobs: []api.Job{job}}, nil
				}
			}
			code := Tracejob(context.Background(), append([]string{"tracejob"}, tt.args...), ts.Sys)
			if code != tt.code || !strings.Contains(ts.err.String(), tt.stderr) || tt.stderr == "" && ts.err.Len() > 0 {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, ts.err, tt.code, tt.stderr)
			}
			if ts.out.String() != tt.want {
				t.Errorf("stdout:\n%q\nwant:\n%q", ts.out, tt.want)
			}
		})
	}
}
