package ctld

import (
	"context"
	"encoding/json"
	"math"
	"net"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/jobid"
)

func TestParseRefCluster(t *testing.T) {
	cases := []struct {
		name, in, want string
		err            bool
	}{
		{"plain", "12", "12.t", false},
		{"full", "12.t", "12.t", false},
		{"array", "12[]", "12[].t", false},
		{"subjob", "12[7].t", "12[7].t", false},
		{"other cluster", "12.x", "", true},
		{"zero", "0", "", true},
		{"garbage", "abc", "", true},
		{"unbalanced", "12[3", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := parseRef(c.in, "t")
			if (err != nil) != c.err {
				t.Fatalf("err %v, want error %v", err, c.err)
			}
			if err == nil && r.ID("t") != c.want {
				t.Fatalf("id %q, want %q", r.ID("t"), c.want)
			}
		})
	}
}

// asUser runs one request through the controller's handler as an ordinary
// user (the socket would give root, an admin, in these tests).
func (tc *testCluster) asUser(id Identity, req api.Request) *api.Response {
	return callAs(tc.ctl, id, req)
}

// indices is an array's indices as qsub -J gives them ("0-9:3").
func indices(s string) jobid.Range {
	r, err := jobid.ParseIndices(s)
	if err != nil {
		panic(err)
	}
	return r
}

func callAs(c *Controller, id Identity, req api.Request) *api.Response {
	req.V = api.Version
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.handle(ctx, id, &req)
}

var (
	alice   = Identity{UID: 1000, GID: 1000, User: "alice"}
	mallory = Identity{UID: 1001, GID: 1001, User: "mallory"}
)

// TestRangesBoundedByTheArray: ranges that once crashed the controller (an
// overflow in the count of 0-9223372036854775807, an unbounded walk of
// 1[0-9223372036854775806]) or stalled it (1[0-20000000]) are refused or
// walk only the array's real indices.
func TestRangesBoundedByTheArray(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	arr := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, ArrayIndices: indices("0-9:3")}})
	n := tc.attachNode("n1")
	for range 4 {
		n.expect(api.MsgStart)
	}
	cases := []struct {
		name string
		req  api.Request
		code string
		jobs int
	}{
		{"overflowing array", api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Share: "a", Command: []string{"x"}, WorkDir: "/tmp",
			ArrayIndices: jobid.Range{Lo: 0, Hi: math.MaxInt, Step: 1}}}}, api.CodeBadRequest, 0},
		{"too many subjobs", api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Share: "a", Command: []string{"x"}, WorkDir: "/tmp",
			ArrayIndices: jobid.Range{Lo: 0, Hi: 100000, Step: 1}}}}, api.CodeBadRequest, 0},
		{"stat of a huge range", api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{"1[0-16777216]"}}}, "", 4},
		{"stat past the largest index", api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{"1[0-9223372036854775806]"}}}, api.CodeUnknownJob, 0},
		{"delete of a wide range", api.Request{Op: api.OpHold, IDs: []string{"1[0-16777216]"}}, api.CodePermission, 0},
		{"delete past the largest index", api.Request{Op: api.OpDelete, IDs: []string{"1[0-9223372036854775806]"}}, api.CodeUnknownJob, 0},
		{"stat of a list", api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{"1[3,9,10-99]"}}}, "", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := tc.asUser(mallory, c.req)
			code := ""
			if resp.Error != nil {
				code = resp.Error.Code
			}
			if code != c.code || len(resp.Jobs) != c.jobs {
				t.Fatalf("answer %+v %d jobs; want code %q and %d jobs", resp.Error, len(resp.Jobs), c.code, c.jobs)
			}
		})
	}
	if j := tc.job(arr); j.State != api.StateArray {
		t.Fatalf("array %s: %s", arr, j.State)
	}
}

// FuzzRequest sends fuzzed requests through the controller's handler as
// an ordinary user and checks after each that it still answers another
// user. Seeds are the inputs that once crashed or stalled it.
func FuzzRequest(f *testing.F) {
	seeds := []string{
		`{"op":"submit","submit":{"job":{"share":"a","command":["x"],"workdir":"/tmp","array_indices":"0-9223372036854775807"}}}`,
		`{"op":"stat","stat":{"ids":["1[0-9223372036854775806]"]}}`,
		`{"op":"delete","ids":["1[0-20000000]"]}`,
		`{"op":"delete","ids":["1[0-9223372036854775806]"]}`,
		`{"op":"hold","ids":["1[]","1[0]","1.t","1.x"]}`,
		`{"op":"alter","alter":{"id":"1[]","priority":-5,"name":"x\n"}}`,
		`{"op":"alter","alter":{"id":"1[0]","deps":[{"type":"afterok","on":"1[]"}]}}`,
		`{"op":"submit","submit":{"job":{"share":"a","command":["x"],"workdir":"/tmp","deps":[{"type":"after","on":"1[0-99999999999]"}]}}}`,
		`{"op":"submit","submit":{"job":{"share":"a","command":["x"],"workdir":"/tmp","array_indices":"0-3","array_max":-1}}}`,
		`{"op":"stat","stat":{"full":true,"summary":true}}`,
		`{"op":"drain","node":"n1"}`,
		`{"op":"nodes"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	tc := newTestCluster(f, []string{"n1:8"}, twoShares)
	canary := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "canary", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 4}, Hold: "u"}}) // held by alice: stays
	tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{Nodes: 1, GPUsPerNode: 1}, ArrayIndices: indices("0-99")}})
	ctl := tc.ctl
	f.Fuzz(func(t *testing.T, line []byte) {
		var req api.Request
		if json.Unmarshal(line, &req) != nil || req.Op == api.OpWait || req.Op == api.OpReconfigure {
			return
		}
		if len(line) > 64<<10 {
			return
		}
		callAs(ctl, mallory, req)
		resp := callAs(ctl, alice, api.Request{Op: api.OpStat, Stat: &api.StatFilter{IDs: []string{canary}}})
		if resp.Error != nil || len(resp.Jobs) != 1 || resp.Jobs[0].Owner.User != "alice" {
			t.Fatalf("after %s: canary %s: %+v", line, canary, resp.Error)
		}
	})
}

// rawCall writes line as is and reads one answer.
func rawCall(t *testing.T, sock, line string) *api.Response {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	var resp api.Response
	if err := api.NewDecoder(conn).Decode(&resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}
