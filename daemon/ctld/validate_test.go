package ctld

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sharq-hpc/sharq/api"
	"github.com/sharq-hpc/sharq/daemon/sched"
	"github.com/sharq-hpc/sharq/jobid"
)

// rawSubmit decodes a submit request as the controller would from the
// wire and hands it to the handler as user id.
func rawSubmit(t *testing.T, tc *testCluster, id Identity, jobJSON string) *api.Response {
	t.Helper()
	var req api.Request
	if err := json.Unmarshal([]byte(`{"op":"submit","submit":{"job":`+jobJSON+`}}`), &req); err != nil {
		t.Fatal(err)
	}
	return tc.asUser(id, req)
}

// TestSubmitIgnoresInternalFields: fields that are the controller's
// (stopping, array parent and index, id, owner, state, runs...) cannot be
// set from the wire. A forged subjob once attached itself to another user's
// array, and stopping:"deleted" made a job even root's qdel could not remove.
func TestSubmitIgnoresInternalFields(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	victim := tc.submitSpec(&api.SubmitSpec{Job: api.JobSpec{Name: "sweep", Share: "a", Command: []string{"true"}, WorkDir: "/tmp",
		Resources: api.Resources{GPUsPerNode: 1}, ArrayIndices: indices("0-3"), Hold: "u"}})
	resp := rawSubmit(t, tc, mallory, `{"share":"a","command":["true"],"workdir":"/tmp","resources":{"gpus_per_node":1},"hold":"u",
		"id":"99.t","seq":99,"owner":{"user":"alice","uid":1000},"partition":"other","array_parent":"`+victim+`","array_index":2,
		"stopping":"deleted","state":"R","runs":7,"preemptions":3,"allocs":[{"node":"n1","gpus":[0]}],"exit_status":0,
		"history":[{"what":"forged"}],"reason":"forged","used":5}`)
	if resp.Error != nil {
		t.Fatalf("submit: %v", resp.Error)
	}
	j := tc.job(resp.JobID)
	if j.ID == "99.t" || j.Owner.User != "mallory" || j.Partition != "gpu" || j.ArrayParent != "" || j.ArrayIndex != 0 ||
		j.Stopping != "" || j.State == api.StateRunning || j.Runs != 0 || j.Preemptions != 0 || len(j.Allocs) != 0 ||
		j.ExitStatus != nil || j.Reason == "forged" || j.Used != 0 || j.History[0].What == "forged" {
		t.Fatalf("forged fields kept: %+v", j)
	}
	if resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpDelete, IDs: []string{resp.JobID}}); resp.Error != nil {
		t.Fatalf("qdel of the job: %v", resp.Error)
	}
	if subs := tc.ctl.subjobsOf(victim); subs != 0 {
		t.Fatalf("%d subjobs attached to %s", subs, victim)
	}
}

// subjobsOf counts the subjob records of an array (on the loop).
func (c *Controller) subjobsOf(arr string) int {
	n := 0
	c.do(bgctx, func() {
		for _, j := range c.jobs {
			if j.ArrayParent == arr {
				n++
			}
		}
	})
	return n
}

// TestSubmitValidatesStrings: every user string is checked on the
// controller, whatever the client.
func TestSubmitValidatesStrings(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name, job, err string
	}{
		{"newline in the name", `"name":"x\nJob Id: 1.t\n    Job_Owner = root"`, "job name"},
		{"escape in the name", `"name":"\u001b[2Jx"`, "job name"},
		{"space in the name", `"name":"a b"`, "job name"},
		{"long name", `"name":"` + long + `"`, "job name"},
		{"newline in the workdir", `"workdir":"/tmp\n/x"`, "control characters"},
		{"relative workdir", `"workdir":"tmp"`, "not absolute"},
		{"escape in stdout", `"stdout":"/tmp/\u001b]0;x\u0007"`, "control characters"},
		{"long stdout", `"stdout":"/` + long + `"`, "longer than"},
		{"env name with =", `"env":{"A=B":"1"}`, "environment variable name"},
		{"env value with NUL", `"env":{"A":"\u0000"}`, "NUL"},
		{"NUL in an argument", `"command":["a\u0000b"]`, "NUL"},
		{"NUL in the script", `"command":null,"script":"echo\u0000"`, "not text"},
		{"image with a newline", `"image":"x\ny"`, "image"},
		{"admin hold", `"hold":"o"`, "hold"},
		{"system hold", `"hold":"s"`, "hold"},
		{"dependency on a selection", `"deps":[{"type":"afterok","on":"1[0-9]"}]`, "more than one subjob"},
		{"huge node count", `"resources":{"nodes":100000000}`, "resources"},
		{"huge array max", `"array_indices":"0-3","array_max":200000`, "%max"},
		{"bad start time", `"not_before":"0001-01-01T00:00:01Z"`, "start time"},
		{"umask not octal", `"umask":"9"`, "umask"},
		{"umask above 0777", `"umask":"1777"`, "umask"},
		{"umask too long", `"umask":"00022"`, "umask"},
		{"umask negative", `"umask":"-22"`, "umask"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Later keys win in encoding/json: the case's fields override the base.
			resp := rawSubmit(t, tc, mallory, `{"share":"a","name":"ok","command":["true"],"workdir":"/tmp",`+tt.job+`}`)
			if resp.Error == nil || resp.Error.Code != api.CodeBadRequest || !strings.Contains(resp.Error.Message, tt.err) {
				t.Fatalf("answer %+v, want bad_request with %q", resp.Error, tt.err)
			}
		})
	}
	// The same base is accepted (so the cases test what they change), with
	// an exported shell function's name and a multi-line value.
	resp := rawSubmit(t, tc, mallory, `{"share":"a","name":"ok-1_x.y+z","command":["true"],"workdir":"/tmp","env":{"BASH_FUNC_f%%":"() {\n echo\n}"},"umask":"022"}`)
	if resp.Error != nil {
		t.Fatalf("base submit refused: %v", resp.Error)
	}
	if j := tc.job(resp.JobID); j.Umask != "022" {
		t.Fatalf("qsub -W umask=022 recorded as %q", j.Umask)
	}
}

// TestPriorityOutOfRangeRefused: a negative priority once became the
// share's default silently.
func TestPriorityOutOfRangeRefused(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	for _, p := range []int{-5, -1, maxPriority + 1} {
		_, e := tc.trySubmit(&api.SubmitSpec{Job: api.JobSpec{Share: "a", Command: []string{"true"}, WorkDir: "/tmp"}, Priority: &p})
		if e == nil || e.Code != api.CodeBadRequest || !strings.Contains(e.Message, "outside") {
			t.Errorf("priority %d: %v", p, e)
		}
	}
}

// TestAlterAllOrNothing: an alter that is refused for any of its parts
// changes none of them, in the record or in the core.
func TestAlterAllOrNothing(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	n := tc.attachNode("n1")
	running := tc.submit("a", 1, nil)
	n.expect(api.MsgStart)
	pending := tc.submit("a", 4, nil) // with the running one, beyond a's quota: it waits
	ten, bad := 10, "x\ny"
	wall := 2 * time.Hour // the partition's max_walltime is 1h
	tests := []struct {
		name string
		id   string
		a    api.AlterSpec
		code string
	}{
		{"priority and name of a running job", running, api.AlterSpec{Priority: &ten, Name: ptr("x")}, api.CodeInvalidState},
		{"priority and a bad name", pending, api.AlterSpec{Priority: &ten, Name: &bad}, api.CodeBadRequest},
		{"priority and a walltime over the max", pending, api.AlterSpec{Priority: &ten, Walltime: &wall}, api.CodeBadRequest},
		{"name and a cycle", pending, api.AlterSpec{Name: ptr("y"), Deps: &[]api.Dep{{Type: jobid.AfterOK, On: pending}}}, api.CodeBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tc.job(tt.id)
			tt.a.ID = tt.id
			resp := callAs(tc.ctl, alice, api.Request{Op: api.OpAlter, Alter: &tt.a})
			if resp.Error == nil || resp.Error.Code != tt.code {
				t.Fatalf("alter: %+v, want %s", resp.Error, tt.code)
			}
			after := tc.job(tt.id)
			if after.Priority != before.Priority || after.Name != before.Name || len(after.History) != len(before.History) ||
				after.Resources.Walltime != before.Resources.Walltime || len(after.Deps) != len(before.Deps) {
				t.Fatalf("changed: %+v\nwas %+v", after, before)
			}
			var corePrio int
			tc.ctl.do(bgctx, func() {
				info, _ := tc.ctl.core.Job(sched.JobID(tt.id))
				corePrio = info.Job.Priority
			})
			if corePrio != before.Priority {
				t.Fatalf("the core has priority %d, the record %d", corePrio, before.Priority)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestUserScriptBytesCapped: one user's unfinished jobs cannot hold more
// than Limits.UserBytes of scripts and environments; finishing one makes
// room, and other users are not affected.
func TestUserScriptBytesCapped(t *testing.T) {
	tc := newTestClusterLimits(t, []string{"n1:8"}, twoShares, "", Limits{UserBytes: 1 << 20})
	script := "#!/bin/sh\n#" + strings.Repeat("x", 300<<10) + "\n"
	spec := func() api.Request {
		return api.Request{Op: api.OpSubmit, Submit: &api.SubmitSpec{Job: api.JobSpec{Share: "a", Script: script, WorkDir: "/tmp", Hold: "u"}}}
	}
	var ids []string
	for range 3 {
		resp := callAs(tc.ctl, mallory, spec())
		if resp.Error != nil {
			t.Fatalf("submit %d: %v", len(ids), resp.Error)
		}
		ids = append(ids, resp.JobID)
	}
	if resp := callAs(tc.ctl, mallory, spec()); resp.Error == nil || !strings.Contains(resp.Error.Message, "would pass max_job_bytes_per_user") {
		t.Fatalf("fourth submit: %+v", resp.Error)
	}
	if resp := callAs(tc.ctl, alice, spec()); resp.Error != nil {
		t.Fatalf("another user: %v", resp.Error)
	}
	if resp := callAs(tc.ctl, mallory, api.Request{Op: api.OpDelete, IDs: ids[:1]}); resp.Error != nil {
		t.Fatal(resp.Error)
	}
	if resp := callAs(tc.ctl, mallory, spec()); resp.Error != nil {
		t.Fatalf("after a qdel: %v", resp.Error)
	}
	// A restart counts the same.
	tc.restart()
	if resp := callAs(tc.ctl, mallory, spec()); resp.Error == nil {
		t.Fatal("the limit was forgotten by a restart")
	}
}

// TestAlterCycleThroughArray: qalter refuses a dependency that closes a
// cycle through an array, named whole or by an index that has not started
// (it has no record of its own): the jobs would wait for each other for
// ever, and a restart, which cuts a cycle, would run one of them.
func TestAlterCycleThroughArray(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	first := tc.submitSpec(spec("a", 1, "u"))
	arrSpec := spec("a", 1, "", api.Dep{Type: jobid.AfterOK, On: first})
	arrSpec.Job.ArrayIndices = indices("0-3")
	arr := tc.submitSpec(arrSpec)
	for _, on := range []string{arr, strings.Replace(arr, "[]", "[2]", 1)} {
		resp := callAs(tc.ctl, alice, api.Request{Op: api.OpAlter, Alter: &api.AlterSpec{ID: first, Deps: &[]api.Dep{{Type: jobid.AfterOK, On: on}}}})
		if resp.Error == nil || resp.Error.Code != api.CodeBadRequest || !strings.Contains(resp.Error.Message, "cycle") {
			t.Errorf("qalter -W depend=afterok:%s of %s: %+v, want a cycle refused", on, first, resp.Error)
		}
	}
	if j := tc.job(first); len(j.Deps) != 0 {
		t.Errorf("%s has dependencies %+v", first, j.Deps)
	}
}

// TestSubmitRefusesDependencyTypes: a dependency type is typed on the
// wire (jobid.DepType): a submission over the socket with one the wire
// does not know, or none, fails to decode and is answered bad_request
// with why.
func TestSubmitRefusesDependencyTypes(t *testing.T) {
	tc := newTestCluster(t, []string{"n1:8"}, twoShares)
	for _, tt := range []struct{ dep, want string }{
		{`{"type":"before","on":"1"}`, "not supported"},
		{`{"type":"afterokay","on":"1"}`, "unknown type"},
		{`{"on":"1"}`, "without a type"},
	} {
		t.Run(tt.dep, func(t *testing.T) {
			conn, err := net.Dial("unix", tc.sock)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			line := `{"v":1,"op":"submit","submit":{"job":{"share":"a","command":["true"],"workdir":"/tmp","deps":[` + tt.dep + `]}}}` + "\n"
			if _, err := conn.Write([]byte(line)); err != nil {
				t.Fatal(err)
			}
			var resp api.Response
			if err := api.NewDecoder(conn).Decode(&resp); err != nil {
				t.Fatal(err)
			}
			if resp.Error == nil || resp.Error.Code != api.CodeBadRequest || !strings.Contains(resp.Error.Message, tt.want) {
				t.Fatalf("answer %+v, want bad_request with %q", resp.Error, tt.want)
			}
		})
	}
}
