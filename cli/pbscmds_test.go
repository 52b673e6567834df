package cli

import (
	"context"
	"reflect"
	"strings"
	"testing"

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
	} {
		ts := newTestSys(t)
		if code := tt.cmd(context.Background(), []string{tt.name, "--help"}, ts.Sys); code != 0 || !strings.Contains(ts.out.String(), tt.want) {
			t.Errorf("%s --help: exit %d, %q", tt.name, code, ts.out)
		}
	}
}
