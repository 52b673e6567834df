package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain name", "plain name"},
		{"naïve-日本", "naïve-日本"},
		{"x\n    Job_Owner = root", `x\n    Job_Owner = root`},
		{"\x1b[2Jboom", `\x1b[2Jboom`},
		{"a\u009bb", `a\u009bb`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"tab\there\x7f", `tab\there\x7f`},
	}
	for _, tt := range tests {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestQstatEscapesHostileStrings: a job whose strings carry newlines or
// escape sequences (written before the controller refused them, or in the
// environment, which may hold them) cannot forge lines of qstat's output or
// reach the terminal.
func TestQstatEscapesHostileStrings(t *testing.T) {
	hostile := api.Job{ID: "7.lab", Seq: 7, Name: "x\nJob Id: 1.lab\n    Job_Owner = root", Owner: api.Owner{User: "mallory"},
		Share: "a", State: api.StateQueued, Env: map[string]string{"A": "\x1b]0;pwned\x07"}, WorkDir: "/tmp/\x1b[2J",
		Resources: api.Resources{Nodes: 1}}
	for _, args := range [][]string{nil, {"-f"}, {"-a"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ts := newTestSys(t)
			ts.rec.reply = func(req api.Request) (*api.Response, error) {
				return &api.Response{V: 1, Jobs: []api.Job{hostile}}, nil
			}
			if code := Qstat(context.Background(), append([]string{"qstat"}, args...), ts.Sys); code != 0 {
				t.Fatalf("exit %d", code)
			}
			out := ts.out.String()
			if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "\nJob Id: 1.lab") || strings.Contains(out, "\n    Job_Owner = root") {
				t.Fatalf("hostile strings reached the output:\n%s", out)
			}
		})
	}
}
