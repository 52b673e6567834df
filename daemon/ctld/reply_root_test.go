//go:build !unit

package ctld

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/sharq-hpc/sharq/api"
)

// TestSubmitAnsweredByLoop: a submission's answer, which the loop writes
// itself once the job is durable, reaches the client in the order of its
// requests, also when it sends several at once or closes its side after
// the request, and a refused submission keeps the connection usable.
func TestSubmitAnsweredByLoop(t *testing.T) {
	const uid = 4344
	submit := func(name string) api.Request {
		return api.Request{V: api.Version, Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{
			Name: name, Share: "a", Command: []string{"true"}, WorkDir: "/tmp", Hold: "u", Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}}}}
	}
	bad := api.Request{V: api.Version, Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Share: "a", WorkDir: "/tmp"}}}
	stat := api.Request{V: api.Version, Op: api.OpStat, Stat: &api.StatFilter{Full: true}}
	tests := []struct {
		name      string
		reqs      []api.Request
		closeSide bool     // CloseWrite after the requests
		want      []string // per answer: "id", "error", or "stat:N" (N jobs listed)
	}{
		{"one", []api.Request{submit("a")}, false, []string{"id"}},
		{"half-closed", []api.Request{submit("a")}, true, []string{"id"}},
		{"pipelined", []api.Request{submit("a"), submit("b"), stat}, false, []string{"id", "id", "stat:2"}},
		{"pipelined then closed", []api.Request{submit("a"), stat, submit("b")}, true, []string{"id", "stat:1", "id"}},
		{"refused, then more", []api.Request{bad, submit("a"), bad, stat}, false, []string{"error", "id", "error", "stat:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCluster(t, []string{"n1:8"}, twoShares)
			conn := dialAs(t, tc.sock, uid)
			var out bytes.Buffer
			for _, r := range tt.reqs {
				if err := api.EncodeRequest(&out, &r); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := conn.Write(out.Bytes()); err != nil {
				t.Fatal(err)
			}
			if tt.closeSide {
				conn.CloseWrite()
			}
			dec := api.NewDecoderLimit(conn, 1<<30)
			var ids []string
			for i, w := range tt.want {
				var resp api.Response
				if err := dec.ReadResponse(&resp); err != nil {
					t.Fatalf("answer %d: %v", i, err)
				}
				switch {
				case w == "id":
					if resp.Error != nil || resp.JobID == "" {
						t.Fatalf("answer %d: %+v %v, want a job id", i, resp, resp.Error)
					}
					if len(ids) > 0 && !(ids[len(ids)-1] < resp.JobID) {
						t.Fatalf("answer %d: job %s after %s", i, resp.JobID, ids[len(ids)-1])
					}
					ids = append(ids, resp.JobID)
					if j := tc.job(resp.JobID); j.Owner.UID != uid || j.State != api.StateHeld {
						t.Fatalf("job %s: owner %d state %s", resp.JobID, j.Owner.UID, j.State)
					}
				case w == "error":
					if resp.Error == nil || resp.Error.Code != api.CodeBadRequest {
						t.Fatalf("answer %d: %+v, want a refusal", i, resp.Error)
					}
				case strings.HasPrefix(w, "stat:"):
					if resp.Error != nil || w != "stat:"+strconv.Itoa(len(resp.Jobs)) {
						t.Fatalf("answer %d: %d jobs, %v; want %s", i, len(resp.Jobs), resp.Error, w)
					}
				}
			}
			if tt.closeSide {
				if _, err := dec.ReadLine(); err == nil {
					t.Fatal("the connection stayed open after the client closed its side")
				}
			}
		})
	}
}
